//! The `.env` rules held to godotenv v1.5.1 itself, the module azd 1.31.2
//! reads and writes `.env` with: a Go program on the pinned module
//! (`tests/godotenv/`, built here with the machine's Go) answers for azd.
//!
//! - What a provider's answer lets out ([`check_entry`]) goes through
//!   godotenv's `Marshal` and reader: the names read back are exactly the
//!   names let out, each with its own value, and the file always reads.
//! - The host's one `.env` reader reads the names godotenv reads, with the
//!   same success or failure, for generated files (CR, CRLF, `export` and a
//!   tab, statements after a closing quote, quotes, comments, any Unicode,
//!   invalid UTF-8, a file past 4 MiB), and the same values where the file
//!   is UTF-8.
//!
//! Seeded: a failure prints its seed (`GODOTENV_SEED=N` replays it).

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use azd_wasm_host_core::dotenv::{self, check_entry};

/// The oracle, built once per test process.
fn oracle() -> &'static PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/godotenv");
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("godotenv-oracle");
        let status = Command::new("go")
            .args(["build", "-o"])
            .arg(&out)
            .arg(".")
            .current_dir(&src)
            .env("GOWORK", "off")
            .env("GOFLAGS", "-mod=readonly")
            .env("GOTOOLCHAIN", "local")
            .env("CGO_ENABLED", "0")
            .status()
            .unwrap_or_else(|e| {
                panic!("cannot run `go` (Go is needed to hold the .env rules to godotenv): {e}")
            });
        assert!(status.success(), "building the godotenv oracle failed");
        out
    })
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn from_hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("the oracle writes hex"))
        .collect()
}

/// What godotenv made of one case.
#[derive(Debug)]
struct Answer {
    text: Vec<u8>,
    values: BTreeMap<Vec<u8>, Vec<u8>>,
    error: Option<String>,
}

fn ask(mode: &str, input: serde_json::Value) -> Vec<Answer> {
    let mut child = Command::new(oracle())
        .arg(mode)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the oracle starts");
    let mut stdin = child.stdin.take().expect("piped");
    let input = serde_json::to_vec(&input).expect("json");
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().expect("the oracle answers");
    writer.join().expect("writer").expect("the oracle reads");
    assert!(out.status.success(), "the oracle failed");
    let answers: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("json");
    answers
        .iter()
        .map(|a| {
            let list = |k: &str| -> Vec<Vec<u8>> {
                a[k].as_array()
                    .map(|l| {
                        l.iter()
                            .map(|s| from_hex(s.as_str().unwrap_or("")))
                            .collect()
                    })
                    .unwrap_or_default()
            };
            Answer {
                text: from_hex(a["text"].as_str().unwrap_or("")),
                values: list("names").into_iter().zip(list("values")).collect(),
                error: a["error"].as_str().map(str::to_owned),
            }
        })
        .collect()
}

/// A seeded generator of the pieces an attacker would put in a name, a
/// value or a file.
struct Gen(fastrand::Rng);

/// What names and values are made of.
const PIECES: &[&str] = &[
    "A",
    "B",
    "z",
    "_",
    "1",
    "09",
    "NODE_OPTIONS",
    "SSL_CERT_FILE",
    "RUSTFLAGS",
    "GREETING",
    "export",
    "export\t",
    "export ",
    "\"",
    "'",
    "\\",
    "\\\\",
    "\\\"",
    "\r",
    "\n",
    "\r\n",
    "\t",
    " ",
    "#",
    " #",
    "=",
    ":",
    "$",
    "${A}",
    "$(",
    "!",
    "`",
    ".",
    "-",
    "é",
    "ʰ",
    "Š",
    "€",
    "\u{85}",
    "\u{a0}",
    "\u{2028}",
    "\u{3000}",
    "\u{feff}",
    "😀",
    "\u{0}",
    "+1",
    "007",
    "-0",
    "99999999999999999999",
];

impl Gen {
    fn new(seed: u64) -> Self {
        Self(fastrand::Rng::with_seed(seed))
    }

    fn piece(&mut self) -> &'static str {
        PIECES[self.0.usize(..PIECES.len())]
    }

    /// A key for a file: mostly one godotenv reads, sometimes not.
    fn key(&mut self) -> String {
        const KEYS: &[&str] = &[
            "A",
            "b_2",
            "export",
            "exportA",
            "A.B",
            "Š",
            "é",
            "ʰ",
            "€",
            "1",
            "A\u{a0}B",
            "A B",
            "_",
            "NODE_OPTIONS",
        ];
        if self.0.u8(..4) == 0 {
            return self.word();
        }
        KEYS[self.0.usize(..KEYS.len())].to_owned()
    }

    /// A name or value: a few pieces, or (half the time) a plain name.
    fn word(&mut self) -> String {
        if self.0.bool() {
            let plain = ["APP_URL", "x", "_1", "Name2", "AZURE_STORAGE_ACCOUNT_NAME"];
            return plain[self.0.usize(..plain.len())].to_owned();
        }
        (0..self.0.usize(1..5)).map(|_| self.piece()).collect()
    }
}

fn seeds(default: u64, count: u64) -> impl Iterator<Item = u64> {
    let start = std::env::var("GODOTENV_SEED")
        .ok()
        .and_then(|s| s.parse().ok());
    let (start, count) = start.map_or((default, count), |s| (s, 1));
    start..start + count
}

/// The value godotenv reads back for `value` written by `Marshal`: integers
/// Go's `strconv.Atoi` reads are written as `%d` (azd's own rewriting,
/// whoever the provider is).
fn as_marshal_writes(value: &str) -> String {
    let digits = value.strip_prefix(['+', '-']).unwrap_or(value);
    if !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && let Ok(n) = value.parse::<i64>()
    {
        return n.to_string();
    }
    value.to_owned()
}

/// A seed, every entry it made (names unique), and those an answer lets out.
type Case = (u64, Vec<(String, String)>, Vec<(String, String)>);

#[test]
fn what_an_answer_lets_out_is_what_azd_reads_back() {
    let mut cases = Vec::new();
    for seed in seeds(1, 400) {
        let mut g = Gen::new(seed);
        let entries: Vec<(String, String)> =
            (0..g.0.usize(1..7)).map(|_| (g.word(), g.word())).collect();
        cases.push((seed, entries));
    }
    // The attacks a review found, always among the cases.
    cases.push((
        0,
        vec![
            ("A=\"1\" NODE_OPTIONS".into(), "--require /tmp/x.js".into()),
            ("A=\"1\"\rSSL_CERT_FILE".into(), "/tmp/ca.pem".into()),
            ("export\tRUSTFLAGS".into(), "-Clinker=/tmp/x".into()),
            ("MY-VAR".into(), "v".into()),
            ("A".into(), "x\\".into()),
            ("B".into(), " NODE_OPTIONS=--require=/tmp/x #".into()),
            ("C".into(), "ends in a quote\"".into()),
        ],
    ));
    let encode = |entries: &[(String, String)]| {
        serde_json::json!({
            "names": entries.iter().map(|(n, _)| to_hex(n.as_bytes())).collect::<Vec<_>>(),
            "values": entries.iter().map(|(_, v)| to_hex(v.as_bytes())).collect::<Vec<_>>(),
        })
    };
    // Unique names, as a map holds them; then what the answer lets out.
    let cases: Vec<Case> = cases
        .into_iter()
        .map(|(seed, entries)| {
            let all: BTreeMap<String, String> = entries.into_iter().collect();
            let all: Vec<(String, String)> = all.into_iter().collect();
            let out = all
                .iter()
                .filter(|(n, v)| check_entry(n, v).is_ok())
                .cloned()
                .collect();
            (seed, all, out)
        })
        .collect();
    let unfiltered = ask(
        "marshal-read",
        cases.iter().map(|(_, all, _)| encode(all)).collect(),
    );
    let filtered = ask(
        "marshal-read",
        cases.iter().map(|(_, _, out)| encode(out)).collect(),
    );

    let mut broken_unfiltered = 0;
    let (mut refused, mut let_out) = (0, 0);
    for ((seed, all, out), (before, after)) in cases.iter().zip(unfiltered.iter().zip(&filtered)) {
        refused += all.len() - out.len();
        let_out += out.len();
        let names_in: Vec<&[u8]> = all.iter().map(|(n, _)| n.as_bytes()).collect();
        let names_back: Vec<&[u8]> = before.values.keys().map(Vec::as_slice).collect();
        if before.error.is_some() || names_in != names_back {
            broken_unfiltered += 1;
        }
        let shown = String::from_utf8_lossy(&after.text);
        assert_eq!(
            after.error, None,
            "seed {seed}: azd could not read {shown:?}"
        );
        let expected: BTreeMap<Vec<u8>, Vec<u8>> = out
            .iter()
            .map(|(n, v)| (n.clone().into_bytes(), as_marshal_writes(v).into_bytes()))
            .collect();
        assert_eq!(
            after.values, expected,
            "seed {seed}: what azd read back from {shown:?} is not what was let out"
        );
    }
    println!(
        "godotenv differential: {} cases, {let_out} entries let out, {refused} refused; \
         unfiltered, azd would have misread {broken_unfiltered} cases",
        cases.len()
    );
    // The generator reaches the class the rule closes: without the rule, azd
    // reads other names (or nothing) for some of these cases.
    assert!(broken_unfiltered > 20, "{broken_unfiltered}");
}

/// A generated `.env` file: statements of every shape, joined in odd ways.
fn file(g: &mut Gen) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..g.0.usize(1..6) {
        let key = g.key();
        // Values in quotes are plain more often, so that many files read.
        let value = g.word();
        let quoted = if g.0.bool() { g.key() } else { g.word() };
        let statement = match g.0.u8(..12) {
            0..=2 => format!("{key}={value}"),
            3..=4 => format!("{key}=\"{quoted}\""),
            5 => format!("{key}='{quoted}'"),
            6 => format!("export\t{key}={value}"),
            7 => format!("# {value}"),
            8 => format!("{key}: {value}"),
            9 => format!("{key}=\"{quoted}\"{}={value}", g.key()),
            10 => format!("  {key} = {value} # {value}"),
            _ => value,
        };
        out.extend_from_slice(statement.as_bytes());
        if g.0.u8(..3) == 0 {
            out.extend_from_slice(g.piece().as_bytes());
        }
        let end: &[u8] = match g.0.u8(..24) {
            0..=3 => b"\r\n",
            4..=5 => b"\r",
            6..=7 => b"",
            8 => b"\xff",
            _ => b"\n",
        };
        out.extend_from_slice(end);
    }
    out
}

#[test]
fn the_hosts_reader_reads_the_names_godotenv_reads() {
    let mut files: Vec<(u64, Vec<u8>)> = seeds(1, 1500)
        .map(|seed| (seed, file(&mut Gen::new(seed))))
        .collect();
    // A statement past 4 MiB (the old reader stopped there), after a long value.
    let mut big = b"A=\"".to_vec();
    big.resize(5 << 20, b'x');
    big.extend_from_slice(b"\"\nNODE_OPTIONS=--require /tmp/x.js\n");
    files.push((0, big));
    // The shapes the review named: `export` and a tab, a lone CR, a second
    // statement after a closing quote.
    for text in [
        &b"export\tRUSTFLAGS=-C\n"[..],
        b"A=1\rSSL_CERT_FILE=/tmp/ca.pem\n",
        b"A=\"1\" NODE_OPTIONS=--require=/x\n",
        b"A=\"x\\\\\"\nB=\" NODE_OPTIONS=evil #\"\n",
        b"TRAILING",
    ] {
        files.push((0, text.to_vec()));
    }
    let answers = ask(
        "read",
        files
            .iter()
            .map(|(_, f)| serde_json::Value::from(to_hex(f)))
            .collect(),
    );
    let (mut failed, mut invalid_utf8) = (0, 0);
    for ((seed, bytes), go) in files.iter().zip(&answers) {
        let shown = String::from_utf8_lossy(&bytes[..bytes.len().min(300)]).into_owned();
        let (names, error) = dotenv::names(bytes);
        let go_names: Vec<String> = go
            .values
            .keys()
            .map(|k| String::from_utf8_lossy(k).into_owned())
            .collect();
        assert_eq!(
            names.into_iter().collect::<Vec<_>>(),
            go_names,
            "seed {seed}: names of {shown:?} (godotenv: {:?})",
            go.error
        );
        assert_eq!(
            error.is_some(),
            go.error.is_some(),
            "seed {seed}: {shown:?}: ours {error:?}, godotenv's {:?}",
            go.error
        );
        failed += usize::from(error.is_some());
        // Byte for byte, as godotenv hands them to the variables it sets.
        let (raw, _) = dotenv::name_bytes(bytes);
        assert_eq!(
            raw.into_iter().collect::<Vec<_>>(),
            go.values.keys().cloned().collect::<Vec<_>>(),
            "seed {seed}: name bytes of {shown:?}"
        );
        if std::str::from_utf8(bytes).is_err() {
            invalid_utf8 += 1;
            continue;
        }
        // UTF-8 text: the values too (the runner reads and edits them).
        let read = dotenv::read(bytes);
        let ours: BTreeMap<Vec<u8>, Vec<u8>> = read
            .statements
            .into_iter()
            .map(|s| (s.key.into_bytes(), s.value.into_bytes()))
            .collect();
        assert_eq!(ours, go.values, "seed {seed}: values of {shown:?}");
    }
    println!(
        "godotenv reader differential: {} files ({failed} unreadable to azd, {invalid_utf8} not UTF-8)",
        files.len()
    );
    // Both outcomes are exercised.
    assert!(failed > 50 && failed < files.len() - 50, "{failed}");
}
