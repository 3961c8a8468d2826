//! Fuzzing of the files a user writes and `run` reads: `azure.yaml` and azd's
//! `.env`. Each is seeded with real files, mutated as text (and, for `.env`,
//! as bytes), and must be read or refused with a message, never panic; a
//! `.env` that is read must also be written back and read again to the same
//! values (nothing lost). Bounded in time (`azd_wasm_host_fuzz::Campaign`).

use azd_wasm_host_fuzz::{Campaign, Mutator, Tally, regressions, regressions_dir};

use super::dotenv::DotEnv;
use super::project::Project;

/// Words of `azure.yaml` that steer its parser.
const YAML_WORDS: [&str; 14] = [
    "infra:",
    "  provider: ",
    "  path: ",
    "  module: ",
    "  config:",
    "    ",
    "- ",
    "&a",
    "*a",
    "!!binary",
    "{",
    "? ",
    "|\n",
    "~",
];

#[test]
fn fuzz_azure_yaml_is_read_or_refused_never_a_panic() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let seeds: Vec<String> = [
        "examples/azd-e2e-project/azure.yaml",
        "examples/python-localfiles/project/azure.yaml",
        "examples/azure-storage/project/azure.yaml",
        "host/author/templates/common/azure.yaml",
    ]
    .iter()
    .map(|p| std::fs::read_to_string(root.join(p)).unwrap())
    .chain([
        "name: odd\ninfra:\n  provider: p\n  config:\n    a: [1, {b: null}, \"c\"]\n    d: 1e400\n"
            .to_owned(),
    ])
    .collect();
    let campaign = Campaign::new("azure-yaml", 5);
    let mut tally = campaign.tally();
    let mut m = Mutator::new(campaign.rng(0));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("azure.yaml");
    while campaign.running() {
        let seed = &seeds[m.rng().usize(..seeds.len())];
        let text = m.text(seed, &YAML_WORDS);
        std::fs::write(&file, &text).unwrap();
        let outcome = std::panic::catch_unwind(|| {
            // What `run` does with a project it read: azd's Initialize options.
            Project::open(dir.path()).map(|p| p.options("p"))
        });
        match outcome {
            Err(_) => tally.fail(text.as_bytes(), "reading azure.yaml panicked"),
            Ok(Ok(_)) => tally.record("read", ""),
            Ok(Err(e)) if format!("{e:#}").trim().is_empty() => {
                tally.fail(text.as_bytes(), "refused without a message");
            }
            Ok(Err(e)) => tally.record(
                "refused",
                &format!("{e:#}").replace(&file.display().to_string(), "FILE"),
            ),
        }
    }
    campaign.finish([tally]);
}

/// Words of `.env` files that steer the parser.
const DOTENV_WORDS: [&str; 12] = [
    "export ", "KEY=", "=", ": ", "\"", "'", "\\n", "${KEY}", "$KEY", " #", "\r\n", "\\",
];

#[test]
fn fuzz_dotenv_is_read_or_refused_and_what_is_read_survives_a_write() {
    let seeds = [
        "AZURE_ENV_NAME=\"dev\"\nAZURE_LOCATION=\"westus\"\n",
        "# comment\nexport A=1\nB: 'single'\nC=\"multi\nline\" # tail\nD=${A}-$B\n",
        "KEY=\"with \\\"quotes\\\" and \\\\ and \\$\"\r\nE=\r\n",
    ];
    let campaign = Campaign::new("dotenv", 5);
    let mut tally = campaign.tally();
    // Kept inputs first, each with every kind of edit.
    for (_, bytes) in regressions(&regressions_dir("dotenv")) {
        for value in [None, Some("v"), Some("v \\"), Some("a\nb $X")] {
            for existing in [true, false] {
                check_write_back(&mut tally, &bytes, value, existing);
            }
        }
    }
    let mut m = Mutator::new(campaign.rng(0));
    while campaign.running() {
        let seed = seeds[m.rng().usize(..seeds.len())];
        // Mostly text edits; sometimes raw bytes (not UTF-8 at all).
        let bytes = if m.rng().u8(0..4) == 0 {
            m.bytes(seed.as_bytes(), 0).0
        } else {
            m.text(seed, &DOTENV_WORDS).into_bytes()
        };
        let value = m.text("v \\ \" $X ' \n # é", &DOTENV_WORDS);
        let existing = m.rng().bool();
        // Sometimes the key is removed instead (`None`).
        let value = (m.rng().u8(0..4) != 0).then_some(value);
        check_write_back(&mut tally, &bytes, value.as_deref(), existing);
    }
    campaign.finish([tally]);
}

/// Tallies what [`write_back`] makes of one input.
fn check_write_back(tally: &mut Tally, bytes: &[u8], value: Option<&str>, existing: bool) {
    match std::panic::catch_unwind(|| write_back(bytes, value, existing)) {
        Err(_) => tally.fail(bytes, ".env handling panicked"),
        Ok(Ok(what)) => tally.record(what, ""),
        Ok(Err(Broken(e))) => tally.fail(
            bytes,
            format!("{e} (value {value:?}, existing key: {existing})"),
        ),
        Ok(Err(Refused(e))) => tally.record("refused", &e),
    }
}

use WriteBack::{Broken, Refused};

/// How a `.env` fared.
enum WriteBack {
    /// Refused when read, with this message (fine).
    Refused(String),
    /// Something was lost or could not be read back (a failure).
    Broken(String),
}

/// Reads `bytes` as a `.env`, sets a key to `value` or removes it (`None`;
/// an existing key when `existing` and nothing in the file expands a
/// variable, else a new one), writes it, reads it again: every other value
/// must be as it was, and the key must read back as `value` (or be gone).
fn write_back(
    bytes: &[u8],
    value: Option<&str>,
    existing: bool,
) -> Result<&'static str, WriteBack> {
    let env = DotEnv::parse_bytes(bytes).map_err(|e| Refused(e.to_string()))?;
    let mut expected = env.values();
    let text = String::from_utf8_lossy(bytes);
    let key = match expected.keys().next() {
        // Changing a value another expands (`${A}`) changes that one too.
        Some(k) if existing && !text.contains('$') => k.clone(),
        _ => "FUZZ_NEW_KEY".to_owned(),
    };
    let mut edited = env.clone();
    match value {
        Some(value) => {
            if edited.set(&key, value).is_err() {
                return Ok("unwritable value");
            }
            expected.insert(key.clone(), value.to_owned());
        }
        None => {
            edited
                .remove(&key)
                .map_err(|e| Broken(format!("a removal was refused: {e}")))?;
            expected.remove(&key);
        }
    }
    let again = DotEnv::parse(&edited.render())
        .map_err(|e| Broken(format!("written back, it cannot be read: {e}")))?;
    if again.values() != expected {
        return Err(Broken(format!(
            "setting {key} changed what is read: {:?} → {:?}",
            expected,
            again.values()
        )));
    }
    Ok(match (value, key == "FUZZ_NEW_KEY") {
        (None, true) => "read, absent key removed",
        (None, false) => "read, key removed",
        (Some(_), true) => "read, key added",
        (Some(_), false) => "read, value replaced",
    })
}
