//! The administrator's ceiling, attacked field by field: a provider asking
//! beyond each field is refused naming the field, what it asks, what the
//! ceiling allows and the file; a grant written another way is judged as the
//! grant it is (a folder's path against the operating system's own
//! resolution); two sources that disagree both hold; a ceiling file someone
//! else could change, or one that does not read, refuses everything.

use std::path::{Path, PathBuf};

use azd_wasm_host_manifest::{Manifest, Policy};
use azd_wasm_host_trust::KeyPair;
use azd_wasm_host_trust::ceiling::{Candidate, Ceiling, CeilingError, Judged, Place, Signer};

const KEY: &str = "1111111111111111111111111111111111111111111111111111111111111111";

/// `text` written as a ceiling file in `dir` (0644, as an administrator writes one).
fn file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    path
}

fn ceiling_of(text: &str) -> (tempfile::TempDir, PathBuf, Ceiling) {
    let dir = tempfile::tempdir().unwrap();
    let path = file(dir.path(), "policy.toml", text);
    let ceiling = Ceiling::from_files(std::slice::from_ref(&path)).unwrap();
    (dir, path, ceiling)
}

/// The policy of a manifest whose `[policy]` tables are `tables`.
fn policy(tables: &str) -> Policy {
    let text = format!("name = \"p\"\ncomponent = \"c.wasm\"\n{tables}");
    Manifest::parse(&text, Path::new("/x/provider.toml"))
        .unwrap()
        .policy
}

fn installed(policy: &Policy) -> Candidate<'_> {
    Candidate {
        provider: "p",
        extension: Some("contoso.infra"),
        signer: Signer::Key(KEY),
        code_signer: None,
        policy,
    }
}

fn refusals(ceiling: &Ceiling, policy: &Policy) -> Vec<Judged> {
    ceiling.refusals(&installed(policy))
}

/// One row: a `[policy]` key, a ceiling setting only it, a policy within
/// it, one beyond it, and what the refusal must say it asks and allows.
struct Row {
    key: &'static str,
    ceiling: &'static str,
    within: &'static str,
    beyond: &'static str,
    asks: &'static str,
    allows: &'static str,
}

const ROWS: &[Row] = &[
    Row {
        key: "fs",
        ceiling: "[grants]\nfs = [{ path = \"infra\", access = \"read\" }]",
        within: "[policy]\nfs = [{ path = \"infra/modules\", access = \"read\" }]",
        beyond: "[policy]\nfs = [{ path = \"infra\", access = \"read-write\" }]",
        asks: "infra (read-write)",
        allows: "infra (read)",
    },
    Row {
        key: "env",
        ceiling: "[grants]\nenv = [\"CONTOSO_*\"]",
        within: "[policy]\nenv = [\"CONTOSO_REGION\"]",
        beyond: "[policy]\nenv = [\"AWS_SECRET_ACCESS_KEY\"]",
        asks: "AWS_SECRET_ACCESS_KEY",
        allows: "CONTOSO_*",
    },
    Row {
        key: "network",
        ceiling: "[grants]\nnetwork = [\"*.database.windows.net:1433\"]",
        within: "[policy]\nnetwork = [\"db.database.windows.net:1433\"]",
        beyond: "[policy]\nnetwork = [\"db.database.windows.net:22\"]",
        asks: "db.database.windows.net:22",
        allows: "*.database.windows.net:1433",
    },
    Row {
        key: "http.allow",
        ceiling: "[grants.http]\nallow = [\"https://management.azure.com\"]",
        within: "[policy.http]\nallow = [\"https://management.azure.com\"]",
        beyond: "[policy.http]\nallow = [\"https://exfil.example\"]",
        asks: "https://exfil.example",
        allows: "https://management.azure.com",
    },
    Row {
        key: "azd.credential_scopes",
        ceiling: "[grants.azd]\ncredential_scopes = [\"https://storage.azure.com/.default\"]",
        within: "[policy.azd]\ncredential_scopes = [\"https://storage.azure.com/.default\"]",
        beyond: "[policy.azd]\ncredential_scopes = [\"https://management.azure.com/.default\"]",
        asks: "https://management.azure.com/.default",
        allows: "https://storage.azure.com/.default",
    },
    Row {
        key: "azd.environment",
        ceiling: "[grants.azd]\nenvironment = \"read\"",
        within: "[policy.azd]\nenvironment = \"read\"",
        beyond: "[policy.azd]\nenvironment = \"read-write\"",
        asks: "read-write",
        allows: "read",
    },
    Row {
        key: "azd.prompt",
        ceiling: "[grants.azd]\nprompt = false",
        within: "",
        beyond: "[policy.azd]\nprompt = true",
        asks: "yes",
        allows: "no",
    },
    Row {
        key: "memory_mb",
        ceiling: "[grants]\nmemory_mb = 128",
        within: "[policy]\nmemory_mb = 64",
        // The default (256 MiB) is asked for too, when the manifest says nothing.
        beyond: "",
        asks: "256 MiB",
        allows: "128 MiB",
    },
    Row {
        key: "call_timeout_secs",
        ceiling: "[grants]\ncall_timeout_secs = 60",
        within: "[policy]\ncall_timeout_secs = 30",
        beyond: "[policy]\ncall_timeout_secs = 120",
        asks: "120 s",
        allows: "60 s",
    },
    Row {
        key: "disk_mb",
        ceiling: "[grants]\ndisk_mb = 16",
        within: "[policy]\nfs = [{ path = \"out\", access = \"read-write\" }]\ndisk_mb = 8",
        beyond: "[policy]\nfs = [{ path = \"out\", access = \"read-write\" }]\ndisk_mb = 32",
        asks: "32 MiB",
        allows: "16 MiB",
    },
    Row {
        key: "http.timeout_secs",
        ceiling: "[grants.http]\ntimeout_secs = 10",
        within: "[policy.http]\nallow = [\"https://a.example\"]\ntimeout_secs = 5",
        beyond: "[policy.http]\nallow = [\"https://a.example\"]\ntimeout_secs = 20",
        asks: "20 s",
        allows: "10 s",
    },
    Row {
        key: "http.max_response_bytes",
        ceiling: "[grants.http]\nmax_response_bytes = 1024",
        within: "[policy.http]\nallow = [\"https://a.example\"]\nmax_response_bytes = 512",
        beyond: "[policy.http]\nallow = [\"https://a.example\"]\nmax_response_bytes = 4096",
        asks: "4096 bytes",
        allows: "1024 bytes",
    },
];

#[test]
fn every_policy_field_has_a_row_here() {
    for field in Policy::default().fields() {
        assert!(
            ROWS.iter().any(|r| r.key == field.key),
            "no ceiling test for [policy] {}",
            field.key
        );
    }
}

#[test]
fn a_provider_asking_beyond_any_grant_is_refused_naming_the_field_the_ask_the_ceiling_and_the_file()
{
    for row in ROWS {
        let (_dir, path, ceiling) = ceiling_of(row.ceiling);
        assert!(
            refusals(&ceiling, &policy(row.within)).is_empty(),
            "{}: within refused: {:?}",
            row.key,
            refusals(&ceiling, &policy(row.within))
        );
        let refused = refusals(&ceiling, &policy(row.beyond));
        assert_eq!(refused.len(), 1, "{}: {refused:?}", row.key);
        let r = &refused[0];
        assert_eq!(r.field, format!("grants.{}", row.key));
        assert_eq!(r.source, path);
        let line = r.to_string();
        assert!(line.contains(row.asks), "{}: {line}", row.key);
        assert!(line.contains(row.allows), "{}: {line}", row.key);
        assert!(line.contains(&path.display().to_string()), "{line}");
        // A ceiling that sets nothing there refuses nothing.
        let (_d, _p, open) = ceiling_of("");
        assert!(
            refusals(&open, &policy(row.beyond)).is_empty(),
            "{}",
            row.key
        );
    }
}

#[test]
fn signers_and_names_are_held_to_the_ceiling() {
    let other = "2222222222222222222222222222222222222222222222222222222222222222";
    let (_dir, _path, ceiling) = ceiling_of(&format!(
        "[signers]\nkeys = [\"{KEY}\"]\nunsigned = false\ndevelopment = false\n\
         [providers]\nallow_extensions = [\"contoso.*\"]\nblock_names = [\"legacy-*\"]\n\
         allow_names = [\"p\", \"legacy-x\"]\n"
    ));
    let p = Policy::default();
    let with = |provider, extension, signer| Candidate {
        provider,
        extension,
        signer,
        code_signer: None,
        policy: &p,
    };
    let fields = |c: Candidate<'_>| -> Vec<String> {
        ceiling.refusals(&c).into_iter().map(|j| j.field).collect()
    };
    assert!(fields(with("p", Some("contoso.infra"), Signer::Key(KEY))).is_empty());
    assert_eq!(
        fields(with("p", Some("contoso.infra"), Signer::Key(other))),
        ["signers.keys"]
    );
    assert_eq!(
        fields(with("p", Some("contoso.infra"), Signer::Unverified)),
        ["signers.unsigned"]
    );
    assert_eq!(
        fields(with("p", None, Signer::Development)),
        ["signers.development"]
    );
    assert_eq!(
        fields(with("p", Some("fabrikam.infra"), Signer::Key(KEY))),
        ["providers.allow_extensions"]
    );
    // Another case of the extension's id is the same extension.
    assert!(fields(with("p", Some("Contoso.Infra"), Signer::Key(KEY))).is_empty());
    assert_eq!(
        fields(with("legacy-x", Some("contoso.infra"), Signer::Key(KEY))),
        ["providers.block_names"]
    );
    assert_eq!(
        fields(with("q", Some("contoso.infra"), Signer::Key(KEY))),
        ["providers.allow_names"]
    );
    // Keys named, `unsigned` unsaid: an unverified provider is not one of the keys'.
    let (_d, _p, keys_only) = ceiling_of(&format!("[signers]\nkeys = [\"{KEY}\"]\n"));
    let refused = keys_only.refusals(&with("p", Some("contoso.infra"), Signer::Unverified));
    assert_eq!(refused.len(), 1);
    assert!(
        refused[0].to_string().contains("to run unverified"),
        "{refused:?}"
    );
    // Nor is an unsigned one run from its folder, unless `development = true` says so.
    assert!(keys_only.requires_signed_development());
    assert_eq!(
        keys_only
            .refusals(&with("p", None, Signer::Development))
            .into_iter()
            .map(|j| j.field)
            .collect::<Vec<_>>(),
        ["signers.development"]
    );
    let (_d, _p, dev) = ceiling_of(&format!(
        "[signers]\nkeys = [\"{KEY}\"]\ndevelopment = true\n"
    ));
    assert!(!dev.requires_signed_development());
    assert!(
        dev.refusals(&with("p", None, Signer::Development))
            .is_empty()
    );
    let (_d, _p, no_unverified) = ceiling_of("[signers]\nunsigned = false\n");
    assert!(no_unverified.requires_signed_development());
}

#[test]
fn precompiled_code_signed_apart_is_held_to_the_signers_too() {
    let other = "2222222222222222222222222222222222222222222222222222222222222222";
    let (_dir, _path, ceiling) = ceiling_of(&format!("[signers]\nkeys = [\"{KEY}\"]\n"));
    let p = Policy::default();
    let with = |code_signer| Candidate {
        provider: "p",
        extension: Some("contoso.infra"),
        signer: Signer::Key(KEY),
        code_signer,
        policy: &p,
    };
    assert!(ceiling.refusals(&with(None)).is_empty());
    assert!(ceiling.refusals(&with(Some(KEY))).is_empty());
    let refused = ceiling.refusals(&with(Some(other)));
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(
        refused[0]
            .to_string()
            .contains(&format!("precompiled code signed by key {other}")),
        "{refused:?}"
    );
}

#[test]
fn a_signer_named_by_its_public_key_file_is_that_keys_whole_id_and_a_short_id_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let key = KeyPair::generate().unwrap().public();
    let pem = file(dir.path(), "contoso.pub", &key.to_pem());
    let path = file(
        dir.path(),
        "policy.toml",
        &format!("[signers]\nkeys = [{:?}]\n", pem.display().to_string()),
    );
    let ceiling = Ceiling::from_files(&[path]).unwrap();
    let p = Policy::default();
    let id = key.id();
    let c = Candidate {
        provider: "p",
        extension: Some("contoso.infra"),
        signer: Signer::Key(&id),
        code_signer: None,
        policy: &p,
    };
    assert!(ceiling.refusals(&c).is_empty());
    let short = file(
        dir.path(),
        "short.toml",
        &format!("[signers]\nkeys = [\"{}\"]\n", key.short_id()),
    );
    let e = Ceiling::from_files(&[short]).unwrap_err().to_string();
    assert!(e.contains("short key id"), "{e}");
}

/// Grants written another way than the ceiling writes them: the same grant.
#[test]
fn a_grant_spelled_another_way_is_the_same_grant() {
    let (_dir, _path, ceiling) = ceiling_of(
        "[grants]\nfs = [{ path = \"./infra/\", access = \"read\" }]\n\
         network = [\"[::1]:5432\", \"DB.Example.com.:1433\"]\n\
         [grants.http]\nallow = [\"HTTPS://Management.Azure.COM:443/\", \"https://*.blob.core.windows.net\"]\n\
         [grants.azd]\ncredential_scopes = [\"https://Storage.Azure.com/.default\"]\n",
    );
    for within in [
        "[policy]\nfs = [{ path = \"infra\", access = \"read\" }]",
        "[policy]\nfs = [{ path = \"infra/../infra/modules\", access = \"read\" }]",
        "[policy]\nfs = [{ path = \"infra\\\\modules\", access = \"read\" }]",
        "[policy]\nnetwork = [\"[0:0::1]:5432\", \"db.example.com:1433\"]",
        "[policy.http]\nallow = [\"https://management.azure.com\", \"https://MANAGEMENT.azure.com:443\"]",
        "[policy.http]\nallow = [\"https://management.azure.com.\", \"https://acct.BLOB.core.windows.net\"]",
        "[policy.azd]\ncredential_scopes = [\"https://STORAGE.azure.com:443/.default\"]",
    ] {
        let r = refusals(&ceiling, &policy(within));
        assert!(r.is_empty(), "{within}: {r:?}");
    }
    for beyond in [
        "[policy]\nfs = [{ path = \"infra/../secrets\", access = \"read\" }]",
        "[policy]\nfs = [{ path = \"infrastructure\", access = \"read\" }]",
        "[policy]\nfs = [{ path = \"/infra\", access = \"read\", outside_project = true }]",
        "[policy]\nnetwork = [\"[::1]:5433\", \"db.example.com.evil.io:1433\"]",
        "[policy.http]\nallow = [\"https://management.azure.com:8443\"]",
        "[policy.http]\nallow = [\"https://blob.core.windows.net\"]",
        "[policy.http]\nallow = [\"https://acct.blob.core.windows.net.evil.io\"]",
        "[policy.azd]\ncredential_scopes = [\"https://storage.azure.com//.default\"]",
        // Another case is another folder where file names keep case: refused, never widened.
        "[policy]\nfs = [{ path = \"Infra\", access = \"read\" }]",
    ] {
        let r = refusals(&ceiling, &policy(beyond));
        assert!(!r.is_empty(), "{beyond} was let through");
    }
}

/// Property: a folder grant is within the ceiling's `a` exactly when the
/// operating system resolves it to `a` or beneath, for paths of `.`, `..`
/// and names, written with either separator: the ceiling's reading of a path
/// is the file system's, not a spelling.
#[test]
fn a_folder_is_within_exactly_where_the_file_system_resolves_it() {
    let project = tempfile::tempdir().unwrap();
    let names = ["a", "b", "ab"];
    // Every folder a path of up to four names can reach.
    let mut level: Vec<PathBuf> = vec![PathBuf::new()];
    for _ in 0..4 {
        let next: Vec<PathBuf> = level
            .iter()
            .flat_map(|p| names.iter().map(move |n| p.join(n)))
            .collect();
        for p in &next {
            std::fs::create_dir_all(project.path().join(p)).unwrap();
        }
        level = next;
    }
    let root = std::fs::canonicalize(project.path()).unwrap();
    let ceiling_dir = root.join("a");
    let (_dir, _path, ceiling) =
        ceiling_of("[grants]\nfs = [{ path = \"a\", access = \"read-write\" }]\n");
    let parts = ["a", "b", "ab", ".", ".."];
    let mut seed = 0x5eed_u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut checked = 0;
    for _ in 0..2000 {
        let len = 1 + (next() % 4) as usize;
        let words: Vec<&str> = (0..len).map(|_| parts[(next() % 5) as usize]).collect();
        let sep = if next() % 2 == 0 { "/" } else { "\\" };
        let text = words.join(sep);
        let os = std::fs::canonicalize(root.join(words.join("/")));
        let Ok(resolved) = os else { continue };
        // A grant leaving the project is refused by the manifest itself.
        if !resolved.starts_with(&root) {
            continue;
        }
        checked += 1;
        let expect = resolved.starts_with(&ceiling_dir);
        let asked = policy(&format!(
            "[policy]\nfs = [{{ path = {text:?}, access = \"read\" }}]"
        ));
        let within = refusals(&ceiling, &asked).is_empty();
        assert_eq!(
            within,
            expect,
            "{text:?} resolves to {}",
            resolved.display()
        );
    }
    assert!(checked > 500, "only {checked} paths inside the project");
}

/// A limit is judged as the runtime enforces it: an HTTP request never
/// waits longer than a call.
#[test]
fn the_http_deadline_is_judged_as_enforced() {
    let (_dir, _path, ceiling) = ceiling_of("[grants.http]\ntimeout_secs = 60\n");
    let within = "[policy]\ncall_timeout_secs = 30\n[policy.http]\nallow = [\"https://a.example\"]\ntimeout_secs = 3600";
    assert!(refusals(&ceiling, &policy(within)).is_empty());
    let beyond = "[policy]\ncall_timeout_secs = 300\n[policy.http]\nallow = [\"https://a.example\"]\ntimeout_secs = 120";
    assert_eq!(refusals(&ceiling, &policy(beyond)).len(), 1);
}

/// What the runtime asks right before it opens a folder granted outside
/// the project, on the path the system resolved: a link inside an allowed
/// folder that points elsewhere is not within it.
#[cfg(unix)]
#[test]
fn a_folder_outside_the_project_is_admitted_by_where_it_resolves() {
    use azd_wasm_host_manifest::FsAccess;
    let root = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(root.path()).unwrap();
    let shared = root.join("shared");
    let secret = root.join("secret");
    let project = root.join("project");
    for d in [&shared, &secret, &project, &project.join("infra")] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::os::unix::fs::symlink(&secret, shared.join("link")).unwrap();
    std::fs::create_dir(shared.join("sub")).unwrap();
    // A link the project carries, under a name the ceiling allows inside it.
    std::os::unix::fs::symlink(&secret, project.join("out")).unwrap();
    let (_dir, _path, ceiling) = ceiling_of(&format!(
        "[grants]\nfs = [{{ path = {:?}, access = \"read-write\" }}, {{ path = \"out\", access = \"read\" }}]\n",
        shared.display().to_string()
    ));
    let real = |p: &Path| std::fs::canonicalize(p).unwrap();
    let admits = |p: &Path, access| ceiling.admits_folder(&project, &real(p), access);
    assert!(admits(&shared.join("sub"), FsAccess::ReadWrite).is_ok());
    let e = admits(&shared.join("link"), FsAccess::Read).unwrap_err();
    assert!(e.contains("grants.fs"), "{e}");
    // An entry inside the project never admits a folder outside it, even one
    // a link of the project's leads to.
    assert!(admits(&project.join("out"), FsAccess::Read).is_err());
    assert!(admits(&shared.join("sub"), FsAccess::Read).is_ok());
    // A ceiling without folders bounds none.
    let (_d, _p, open) = ceiling_of("[grants]\nmemory_mb = 64\n");
    assert!(!open.bounds_folders());
    assert!(
        open.admits_folder(&project, &real(&secret), FsAccess::ReadWrite)
            .is_ok()
    );
}

#[test]
fn two_sources_that_disagree_both_hold_each_naming_itself() {
    let dir = tempfile::tempdir().unwrap();
    let machine = file(dir.path(), "machine.toml", "[grants]\nmemory_mb = 512\n");
    let config = file(dir.path(), "config.toml", "[grants]\nmemory_mb = 128\n");
    let ceiling = Ceiling::read(vec![
        (machine.clone(), Place::Machine, true),
        (config.clone(), Place::ConfigFolder, true),
    ])
    .unwrap();
    let r = refusals(&ceiling, &policy("[policy]\nmemory_mb = 256"));
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0].source, config);
    let r = refusals(&ceiling, &policy("[policy]\nmemory_mb = 1024"));
    let sources: Vec<_> = r.iter().map(|j| j.source.clone()).collect();
    assert_eq!(sources, [machine, config]);
    assert!(refusals(&ceiling, &policy("[policy]\nmemory_mb = 100")).is_empty());
}

#[test]
fn consent_ahead_of_time_and_signed_development_are_read_from_any_source() {
    let dir = tempfile::tempdir().unwrap();
    let lax = file(dir.path(), "lax.toml", "[consent]\nprompt = true\n");
    let strict = file(
        dir.path(),
        "strict.toml",
        "[consent]\nprompt = false\n[signers]\ndevelopment = false\n",
    );
    let one = Ceiling::from_files(std::slice::from_ref(&lax)).unwrap();
    assert!(one.forbids_prompt().is_none() && !one.requires_signed_development());
    let both = Ceiling::from_files(&[lax, strict.clone()]).unwrap();
    assert_eq!(both.forbids_prompt(), Some(strict.as_path()));
    assert!(both.requires_signed_development());
}

#[test]
fn a_ceiling_that_cannot_be_used_refuses_rather_than_being_skipped() {
    let dir = tempfile::tempdir().unwrap();
    for (text, expect) in [
        ("[grants]\nmemroy_mb = 1\n", "unknown field"),
        ("[grants\n", "cannot be read"),
        ("[grants.http]\nallow = [\"https://*.net\"]\n", "too wide"),
        ("[grants]\nnetwork = [\"host\"]\n", "names no port"),
        ("[signers]\nkeys = [\"contoso.pub\"]\n", "absolute path"),
        ("[grants]\ncall_timeout_secs = -1\n", "positive"),
    ] {
        let path = file(dir.path(), "bad.toml", text);
        let e = Ceiling::from_files(std::slice::from_ref(&path)).unwrap_err();
        assert!(matches!(e, CeilingError::Invalid { .. }), "{text}: {e}");
        let e = e.to_string();
        assert!(
            e.contains(expect) && e.contains("no provider runs"),
            "{text}: {e}"
        );
    }
    // Named and not there: refused; one of the usual places not there: no ceiling.
    let missing = dir.path().join("missing.toml");
    assert!(Ceiling::from_files(std::slice::from_ref(&missing)).is_err());
    let none = Ceiling::read(vec![(missing, Place::Machine, false)]).unwrap();
    assert!(none.is_empty());
}

/// The file `AZD_WASM_HOST_POLICY` names is absolute and not one a
/// repository or project carries; a file that does not parse is reported by
/// line and column, never quoted (it may be anything).
#[test]
fn a_named_ceiling_is_absolute_and_outside_any_project_and_is_never_quoted() {
    let dir = tempfile::tempdir().unwrap();
    let e = Ceiling::load_with(None, Some(PathBuf::from("ci/policy.toml"))).unwrap_err();
    assert!(e.to_string().contains("absolute path"), "{e}");
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let carried = file(&repo, "policy.toml", "[grants]\nmemory_mb = 64\n");
    let e = Ceiling::load_with(None, Some(carried)).unwrap_err();
    assert!(e.to_string().contains("the git work tree"), "{e}");
    let fine = file(dir.path(), "policy.toml", "[grants]\nmemory_mb = 64\n");
    let c = Ceiling::load_with(None, Some(fine)).unwrap();
    assert!(!c.is_empty());
    let secret = file(
        dir.path(),
        "environ",
        "AZD_ACCESS_TOKEN=s3cr3t-token-value\n",
    );
    let e = Ceiling::from_files(&[secret]).unwrap_err().to_string();
    assert!(e.contains("line 1, column"), "{e}");
    assert!(!e.contains("s3cr3t"), "{e}");
}

#[cfg(unix)]
#[test]
fn a_ceiling_others_could_change_refuses_everything() {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = |p: &Path, m: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    };
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("etc");
    std::fs::create_dir(&folder).unwrap();
    let path = file(&folder, "policy.toml", "[grants]\nmemory_mb = 64\n");
    mode(&path, 0o666);
    let e = Ceiling::from_files(std::slice::from_ref(&path)).unwrap_err();
    assert!(matches!(e, CeilingError::Unsafe { .. }), "{e}");
    assert!(e.to_string().contains("chmod go-w"), "{e}");
    mode(&path, 0o644);
    // Its folder writable by others: they could put another file in its place.
    mode(&folder, 0o777);
    let e = Ceiling::from_files(std::slice::from_ref(&path)).unwrap_err();
    assert!(e.to_string().contains(&folder.display().to_string()), "{e}");
    // Unless it is sticky (as /tmp is): then nobody removes what is not theirs.
    mode(&folder, 0o1777);
    assert!(Ceiling::from_files(std::slice::from_ref(&path)).is_ok());
    mode(&folder, 0o755);
    assert!(Ceiling::from_files(&[path]).is_ok());
}

/// The ```toml blocks of docs/trust.md's ceiling section, the key file
/// they name replaced by `key`.
fn documented_ceilings(key: &Path) -> Vec<String> {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/trust.md");
    let text = std::fs::read_to_string(docs).unwrap();
    let section = text
        .split("\n## A ceiling for platform teams\n")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("docs/trust.md has the ceiling's section");
    section
        .split("```toml\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap())
        .map(|b| b.replace("/etc/azd/wasm-host/contoso.pub", &key.display().to_string()))
        .collect()
}

/// The schema and the example the docs give are ceilings this host reads,
/// and the example does what its title says.
#[test]
fn the_documented_ceilings_read_and_the_example_allows_only_what_it_says() {
    let dir = tempfile::tempdir().unwrap();
    let contoso = KeyPair::generate().unwrap().public();
    let pem = file(dir.path(), "contoso.pub", &contoso.to_pem());
    let blocks = documented_ceilings(&pem);
    assert_eq!(blocks.len(), 2, "the schema and the team's example");
    for (i, text) in blocks.iter().enumerate() {
        let path = file(dir.path(), &format!("doc{i}.toml"), text);
        Ceiling::from_files(&[path]).unwrap_or_else(|e| panic!("block {i}: {e}"));
    }
    let team = file(dir.path(), "team.toml", &blocks[1]);
    let ceiling = Ceiling::from_files(&[team]).unwrap();
    let id = contoso.id();
    let judge = |tables: &str, signer| {
        let p = policy(tables);
        let c = Candidate {
            provider: "infra",
            extension: Some("contoso.infra"),
            signer,
            code_signer: None,
            policy: &p,
        };
        ceiling.refusals(&c)
    };
    let storage = "[policy]\nmemory_mb = 64\n[policy.http]\nallow = [\"https://management.azure.com\", \"https://acct.blob.core.windows.net\"]\n[policy.azd]\ncredential_scopes = [\"https://management.azure.com/.default\"]";
    assert!(judge(storage, Signer::Key(&id)).is_empty());
    let other_key = "3".repeat(64);
    assert_eq!(judge(storage, Signer::Key(&other_key)).len(), 1);
    assert_eq!(judge(storage, Signer::Unverified).len(), 1);
    assert_eq!(judge(storage, Signer::Development).len(), 1);
    for beyond in [
        "[policy.http]\nallow = [\"https://exfil.example\"]",
        "[policy]\nenv = [\"HOME\"]",
        "[policy]\nnetwork = [\"db.example.com:5432\"]",
        "[policy.azd]\ncredential_scopes = [\"https://vault.azure.net/.default\"]",
    ] {
        assert_eq!(judge(beyond, Signer::Key(&id)).len(), 1, "{beyond}");
    }
}
