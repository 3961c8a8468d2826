//! [`Campaign`]: one bounded, seeded run of a fuzz target, its [`Tally`],
//! and the failures it keeps ([`regressions`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Environment variable: seconds every campaign runs (a maintainer's long run).
pub const ENV_SECS: &str = "AZD_WASM_HOST_FUZZ_SECS";
/// Environment variable: the seed of every campaign (to replay one).
pub const ENV_SEED: &str = "AZD_WASM_HOST_FUZZ_SEED";

/// One bounded run of a fuzz target.
#[derive(Debug, Clone)]
pub struct Campaign {
    name: String,
    seed: u64,
    duration: Duration,
    started: Instant,
}

impl Campaign {
    /// A campaign called `name`, `default_secs` long unless [`ENV_SECS`] says
    /// otherwise.
    pub fn new(name: &str, default_secs: u64) -> Self {
        let secs = std::env::var(ENV_SECS)
            .ok()
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s > 0.0)
            .unwrap_or(default_secs as f64);
        let seed = std::env::var(ENV_SEED)
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| fastrand::u64(..));
        eprintln!("fuzz {name}: seed {seed} ({ENV_SEED}={seed} replays it), {secs} s");
        Self {
            name: name.to_owned(),
            seed,
            duration: Duration::from_secs_f64(secs),
            started: Instant::now(),
        }
    }

    /// The random source of worker `worker`.
    pub fn rng(&self, worker: u64) -> fastrand::Rng {
        fastrand::Rng::with_seed(self.seed ^ worker.wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }

    /// Whether there is time left.
    pub fn running(&self) -> bool {
        self.started.elapsed() < self.duration
    }

    /// A tally for one worker.
    pub fn tally(&self) -> Tally {
        Tally {
            target: self.name.clone(),
            ..Tally::default()
        }
    }

    /// Prints the figures of `tallies` and fails (naming the saved inputs) if any
    /// input failed or none was tried.
    pub fn finish(self, tallies: impl IntoIterator<Item = Tally>) {
        let mut all = self.tally();
        for t in tallies {
            all.merge(t);
        }
        let secs = self.started.elapsed().as_secs_f64();
        let classes: Vec<String> = all
            .classes
            .iter()
            .map(|(class, n)| format!("{class} {n}"))
            .collect();
        eprintln!(
            "fuzz {}: {} inputs in {secs:.1} s ({:.0}/s), {} distinct outcomes, failures: {} [{}]",
            self.name,
            all.tried,
            all.tried as f64 / secs.max(f64::EPSILON),
            all.distinct.len(),
            all.failures.len(),
            classes.join(", ")
        );
        assert!(all.tried > 0, "fuzz {}: no input was tried", self.name);
        assert!(
            all.failures.is_empty(),
            "fuzz {} (seed {}): {} failure(s):\n{}",
            self.name,
            self.seed,
            all.failures.len(),
            all.failures.join("\n")
        );
    }
}

/// What one worker saw.
#[derive(Debug, Default)]
pub struct Tally {
    target: String,
    tried: u64,
    classes: BTreeMap<String, u64>,
    distinct: BTreeSet<String>,
    failures: Vec<String>,
}

impl Tally {
    /// Counts one input whose outcome is `class` (`"answered"`, `"refused"`, ...)
    /// with `detail` (an error's text, say) telling outcomes of a class apart.
    pub fn record(&mut self, class: &str, detail: &str) {
        self.tried += 1;
        *self.classes.entry(class.to_owned()).or_default() += 1;
        // The message's first line up to what it quotes of the input, digits aside: the
        // same check failing on other bytes is one outcome.
        let shape: String = detail
            .chars()
            .take_while(|c| !matches!(c, '"' | '\'' | '`' | '\n'))
            .map(|c| if c.is_ascii_digit() { '#' } else { c })
            .take(160)
            .collect();
        self.distinct.insert(format!("{class}: {shape}"));
    }

    /// Records a failing input: saved under `target/fuzz-failures/`, and
    /// reported by [`Campaign::finish`]. Keeps the first few only.
    pub fn fail(&mut self, input: &[u8], why: impl Into<String>) {
        self.tried += 1;
        if self.failures.len() >= 5 {
            return;
        }
        let why = why.into();
        let saved = save_failure(&self.target, input);
        self.failures.push(format!(
            "  {why}\n    input ({} bytes) saved to {saved}",
            input.len()
        ));
    }

    fn merge(&mut self, other: Tally) {
        self.tried += other.tried;
        for (class, n) in other.classes {
            *self.classes.entry(class).or_default() += n;
        }
        self.distinct.extend(other.distinct);
        self.failures.extend(other.failures);
    }
}

/// Writes `input` (hex) to `target/fuzz-failures/<target>-<hash>.hex`.
fn save_failure(target: &str, input: &[u8]) -> String {
    let dir = failures_dir();
    let hash = input.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
    });
    let path = dir.join(format!("{target}-{hash:016x}.hex"));
    match std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, hex::encode(input))) {
        Ok(()) => path.display().to_string(),
        Err(e) => format!("(not saved: {e}) {}", hex::encode(input)),
    }
}

/// `target/fuzz-failures` of the workspace.
fn failures_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    target.join("fuzz-failures")
}

/// The folder of regression inputs kept for `target`
/// (`host/fuzz/regressions/<target>`).
pub fn regressions_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("regressions")
        .join(target)
}

/// The regression inputs kept in `dir`: every `*.hex` file, decoded, with its
/// name. A missing folder holds none.
pub fn regressions(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<(String, Vec<u8>)> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "hex"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            let clean: String = text.chars().filter(char::is_ascii_hexdigit).collect();
            let bytes =
                hex::decode(&clean).unwrap_or_else(|e| panic!("{}: not hex ({e})", p.display()));
            (
                p.file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned(),
                bytes,
            )
        })
        .collect();
    out.sort();
    out
}
