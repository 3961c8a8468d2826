//! Side by side with azd's own Go SDK, in one run: the same trivial provider (state answers
//! two fixed outputs; deploy reports `BENCH_PROGRESS` messages) served by
//!
//! - `scripts/bench/c-provider` as a WebAssembly component, packaged by `azd-wasm-host package`
//!   with the shipped sidecar (built alone, without compilers, by `scripts/bench.sh`) and
//!   unpacked as `azd extension install` lays it out, so its code is the package's precompiled
//!   code, and
//! - `scripts/bench/go-provider`, an extension on azd 1.31.2's `pkg/azdext`
//!   (`NewExtensionHost(...).WithProvisioningProvider`),
//!
//! both started and driven by the simulated azd exactly as azd starts and drives an
//! extension (its `listen` command, its environment, its gRPC server on loopback), taking
//! turns process by process so that the machine's other work weighs on both alike. A bare
//! tonic echo over the same loopback is the floor. Prints one Markdown table. Then the 19 MB
//! Python example, packaged and installed the same way, started from a new HOME with an empty
//! cache: spawn → Ready and the first Initialize.
//!
//! `scripts/bench.sh` builds both providers and runs this. Environment:
//! `BENCH_SIDECAR` (the sidecar build to package), `BENCH_GO_EXTENSION` (the Go extension
//! binary; without it only our column is measured),
//! `BENCH_RUNS` (processes started per subject, default 20), `BENCH_REQUESTS` (state round
//! trips, default 10000), `BENCH_PROGRESS` (progress messages of one deploy, default 100000),
//! `BENCH_SMAPS_DIR` (where to keep each process's `/proc/<pid>/smaps` when idle after Ready,
//! as `<subject>-<pid>.smaps`: what its resident memory is made of).

#![allow(clippy::print_stdout, reason = "a benchmark prints its table")]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_sim::{SimAzd, SimOptions};
use common::{Table, env_usize, mb, median, mib, ms, percentile, raw_ping_pong, rss_kib, us};

const PROVIDER: &str = "bench";
/// How long a process idles after Ready before its Initialize (and after it, before the
/// State that measures what a request after an idle costs anyway).
const IDLE: Duration = Duration::from_millis(100);

/// One extension under test.
struct Subject {
    label: &'static str,
    program: PathBuf,
    env: Vec<(String, String)>,
    /// The archive it was installed from; else one is made of the binary alone.
    archive: Option<PathBuf>,
}

struct Sizes {
    stripped: u64,
    archive: u64,
}

/// What one subject measured.
struct Measured {
    cold_ready: Option<Duration>,
    cold_initialize: Option<Duration>,
    ready: Duration,
    initialize: Duration,
    /// A State sent after the process idled as long as before its Initialize.
    state_after_idle: Duration,
    /// Initialize less that State, per process (µs; either may be the longer).
    initialize_beyond_us: f64,
    idle_rss_kib: u64,
    state_p50: Duration,
    state_p99: Duration,
    progress_per_s: f64,
    progress_shown: usize,
    progress_order: ProgressOrder,
    rss_after_kib: u64,
    sizes: Sizes,
}

struct Settings {
    runs: usize,
    requests: usize,
    progress: usize,
}

fn config(progress: usize) -> prost_types::Struct {
    let mut config = serde_json::Map::new();
    config.insert("progress".into(), progress.to_string().into());
    azd_wasm_host_core::json::object_to_struct(&config)
}

/// One process as azd starts it: spawn→Ready, idle memory, then the first Initialize. With
/// `load`, also the state round trips and the progress deploy.
struct OneRun {
    ready: Duration,
    idle_rss_kib: u64,
    initialize: Duration,
    state_after_idle: Duration,
    load: Option<Load>,
}

struct Load {
    state: Vec<Duration>,
    progress_per_s: f64,
    progress_shown: usize,
    order: ProgressOrder,
    rss_after_kib: u64,
}

/// How the deploy's progress reached azd: in the order reported, ending with the last
/// step, and nothing after the answer (azd drops or misplaces what comes after).
#[derive(Clone, Copy)]
struct ProgressOrder {
    in_order: bool,
    last_shown: bool,
    late: u64,
}

impl std::fmt::Display for ProgressOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let yes = |b: bool| if b { "yes" } else { "NO" };
        write!(
            f,
            "in order: {}, last step shown: {}, after the answer: {}",
            yes(self.in_order),
            yes(self.last_shown),
            self.late
        )
    }
}

async fn one_run(subject: &Subject, s: &Settings, load: bool) -> anyhow::Result<OneRun> {
    let sim = SimAzd::start(SimOptions::default()).await?;
    let mut cmd = tokio::process::Command::new(&subject.program);
    cmd.envs(subject.env.iter().cloned());
    let t = Instant::now();
    let spawn = azd_wasm_host_sim::SpawnOptions {
        capture_stderr: true,
        ..Default::default()
    };
    let mut process = sim.spawn_extension_with(cmd, spawn).await?;
    let ready = t.elapsed();
    let pid = process.id().context("no pid")?;
    // Idle: what the process holds once it has settled after Ready.
    tokio::time::sleep(IDLE).await;
    let idle_rss_kib = rss_kib(pid).unwrap_or(0);
    if let Some(dir) = std::env::var_os("BENCH_SMAPS_DIR") {
        let kept = Path::new(&dir).join(format!("{}-{pid}.smaps", subject.label));
        if let Err(e) = std::fs::copy(format!("/proc/{pid}/smaps"), &kept) {
            eprintln!("  (smaps of {pid} not kept: {e})");
        }
    }
    let handle = sim
        .provider(PROVIDER, Duration::from_secs(5))
        .await?
        .with_call_timeout(Duration::from_secs(300));
    let project = std::env::temp_dir();
    let options = pb::ProvisioningOptions {
        provider: PROVIDER.into(),
        config: Some(config(s.progress)),
        ..Default::default()
    };
    let t = Instant::now();
    handle
        .initialize(&project.to_string_lossy(), options)
        .await?;
    let initialize = t.elapsed();
    // The same idle, then a request that costs the provider next to nothing: what the
    // first request after an idle costs anyway (both processes and the driver waking).
    tokio::time::sleep(IDLE).await;
    let t = Instant::now();
    handle
        .state(pb::ProvisioningStateOptions::default())
        .await?;
    let state_after_idle = t.elapsed();
    let load = if load {
        let driven = drive(&handle, s, pid).await;
        Some(driven.with_context(|| {
            format!("{}; its stderr:\n{}", subject.label, process.stderr_text())
        })?)
    } else {
        None
    };
    sim.close_streams();
    let _ = process.wait(Duration::from_secs(10)).await;
    sim.shutdown().await;
    Ok(OneRun {
        ready,
        idle_rss_kib,
        initialize,
        state_after_idle,
        load,
    })
}

async fn drive(
    handle: &azd_wasm_host_sim::ProviderHandle,
    s: &Settings,
    pid: u32,
) -> anyhow::Result<Load> {
    for _ in 0..200 {
        handle
            .state(pb::ProvisioningStateOptions::default())
            .await?;
    }
    let mut state = Vec::with_capacity(s.requests);
    for _ in 0..s.requests {
        let t = Instant::now();
        let r = handle
            .state(pb::ProvisioningStateOptions::default())
            .await?;
        state.push(t.elapsed());
        let greeting = r.state.as_ref().and_then(|st| st.outputs.get("GREETING"));
        anyhow::ensure!(
            greeting.is_some_and(|g| g.value == "hello"),
            "state answered {r:?}, not the fixed outputs"
        );
    }
    state.sort();
    let mut shown = Vec::new();
    let t = Instant::now();
    handle
        .deploy(|p| shown.push(p.message.parse::<usize>().unwrap_or(usize::MAX)))
        .await?;
    let took = t.elapsed();
    // Give stragglers a moment to arrive, so that late ones are counted.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let order = ProgressOrder {
        in_order: shown.windows(2).all(|w| w[0] < w[1]),
        last_shown: shown.last() == Some(&(s.progress - 1)),
        late: handle.late_messages(),
    };
    Ok(Load {
        state,
        progress_per_s: s.progress as f64 / took.as_secs_f64(),
        progress_shown: shown.len(),
        order,
        rss_after_kib: rss_kib(pid).unwrap_or(0),
    })
}

/// What one subject's starts measured, gathered run by run.
#[derive(Default)]
struct Starts {
    ready: Vec<Duration>,
    init: Vec<Duration>,
    after_idle: Vec<Duration>,
    beyond: Vec<f64>,
    rss: Vec<u64>,
    load: Option<Load>,
}

impl Starts {
    fn add(&mut self, r: OneRun) {
        self.ready.push(r.ready);
        self.init.push(r.initialize);
        self.after_idle.push(r.state_after_idle);
        self.beyond
            .push((r.initialize.as_secs_f64() - r.state_after_idle.as_secs_f64()) * 1e6);
        self.rss.push(r.idle_rss_kib);
        self.load = r.load.or(self.load.take());
    }

    fn measured(mut self, subject: &Subject, first: Option<OneRun>) -> anyhow::Result<Measured> {
        let load = self.load.context("the last run measured no load")?;
        self.rss.sort_unstable();
        self.beyond.sort_by(f64::total_cmp);
        Ok(Measured {
            cold_ready: first.as_ref().map(|f| f.ready),
            cold_initialize: first.as_ref().map(|f| f.initialize),
            ready: median(&mut self.ready),
            initialize: median(&mut self.init),
            state_after_idle: median(&mut self.after_idle),
            initialize_beyond_us: self.beyond[self.beyond.len() / 2],
            idle_rss_kib: self.rss[self.rss.len() / 2],
            state_p50: percentile(&load.state, 0.5),
            state_p99: percentile(&load.state, 0.99),
            progress_per_s: load.progress_per_s,
            progress_shown: load.progress_shown,
            progress_order: load.order,
            rss_after_kib: load.rss_after_kib,
            sizes: sizes(subject)?,
        })
    }
}

/// Starts each subject `s.runs` times, taking turns (ours, Go, ours, Go, ...), so that
/// whatever else the machine does for a while weighs on every column alike; the last start
/// of each also carries the load. A first start of ours fills the compile cache: the cold row.
async fn measure(subjects: &[&Subject], s: &Settings) -> anyhow::Result<Vec<Measured>> {
    let labels: Vec<_> = subjects.iter().map(|x| x.label).collect();
    eprintln!("{}: {} processes each, in turn", labels.join(", "), s.runs);
    let first = one_run(subjects[0], s, false).await?;
    let mut starts: Vec<Starts> = subjects.iter().map(|_| Starts::default()).collect();
    for i in 0..s.runs {
        for (subject, gathered) in subjects.iter().zip(&mut starts) {
            gathered.add(one_run(subject, s, i + 1 == s.runs).await?);
        }
    }
    let mut first = Some(first);
    subjects
        .iter()
        .zip(starts)
        .map(|(subject, gathered)| gathered.measured(subject, first.take()))
        .collect()
}

/// The binary stripped as it is packaged (`strip`, when the machine has it), and its
/// archive: the one it was installed from, else a .tar.gz of the binary alone.
fn sizes(subject: &Subject) -> anyhow::Result<Sizes> {
    let dir = tempfile::tempdir()?;
    let name = subject
        .program
        .file_name()
        .context("the binary has no file name")?;
    let binary = dir.path().join(name);
    std::fs::copy(&subject.program, &binary)?;
    match Command::new("strip").arg(&binary).status() {
        Ok(st) if st.success() => {}
        _ => eprintln!("  (strip unavailable: {} measured as built)", subject.label),
    }
    let archive = match &subject.archive {
        Some(archive) => archive.clone(),
        None => {
            let archive = dir.path().join("package.tar.gz");
            let mut tar = Command::new("tar");
            tar.arg("czf")
                .arg(&archive)
                .arg("-C")
                .arg(dir.path())
                .arg(name);
            anyhow::ensure!(tar.status()?.success(), "tar failed");
            archive
        }
    };
    Ok(Sizes {
        stripped: std::fs::metadata(&binary)?.len(),
        archive: std::fs::metadata(&archive)?.len(),
    })
}

/// A row: what, our value, Go's value, the floor, and ours ÷ Go (with whether ours is at
/// or better than Go's).
fn compare(
    table: &mut Table,
    what: String,
    ours: f64,
    go: Option<f64>,
    floor: Option<String>,
    show: impl Fn(f64) -> String,
    higher_is_better: bool,
) {
    let (go_cell, ratio) = match go {
        Some(g) => {
            let ratio = ours / g.max(f64::MIN_POSITIVE);
            let ok = if higher_is_better {
                ratio >= 1.0
            } else {
                ratio <= 1.0
            };
            (
                show(g),
                format!(
                    "{ratio:.2}× {}",
                    if ok { "(at or better)" } else { "(worse)" }
                ),
            )
        }
        None => ("not measured".into(), "–".into()),
    };
    table.row(vec![
        what,
        show(ours),
        go_cell,
        floor.unwrap_or_else(|| "–".into()),
        ratio,
    ]);
}

fn secs(f: impl Fn(Duration) -> String) -> impl Fn(f64) -> String {
    move |v| f(Duration::from_secs_f64(v))
}

fn print(ours: &Measured, go: Option<&Measured>, floor: &[Duration], s: &Settings) {
    let mut t = Table::new(&[
        "measurement",
        "azd-wasm-host (C component)",
        "Go SDK extension",
        "tonic floor",
        "ratio (ours ÷ Go)",
    ]);
    let g = |f: fn(&Measured) -> f64| go.map(f);
    let d = |x: Duration| x.as_secs_f64();
    let runs = s.runs;
    compare(
        &mut t,
        format!("spawn → Ready (median of {runs})"),
        d(ours.ready),
        g(|m| m.ready.as_secs_f64()),
        None,
        secs(ms),
        false,
    );
    compare(
        &mut t,
        format!("Initialize round trip (median of {runs})"),
        d(ours.initialize),
        g(|m| m.initialize.as_secs_f64()),
        None,
        secs(us),
        false,
    );
    compare(
        &mut t,
        format!("State round trip after the same idle (median of {runs})"),
        d(ours.state_after_idle),
        g(|m| m.state_after_idle.as_secs_f64()),
        None,
        secs(us),
        false,
    );
    // A difference near zero: its ratio would mean nothing.
    let beyond = |m: &Measured| format!("{:+.1} µs", m.initialize_beyond_us);
    t.row(vec![
        format!("Initialize less that State, per process (median of {runs})"),
        beyond(ours),
        go.map_or_else(|| "not measured".into(), beyond),
        "–".into(),
        "–".into(),
    ]);
    let n = s.requests;
    let p50 = Some(us(percentile(floor, 0.5)));
    let p99 = Some(us(percentile(floor, 0.99)));
    compare(
        &mut t,
        format!("State round trip p50 ({n})"),
        d(ours.state_p50),
        g(|m| m.state_p50.as_secs_f64()),
        p50,
        secs(us),
        false,
    );
    compare(
        &mut t,
        "State round trip p99".into(),
        d(ours.state_p99),
        g(|m| m.state_p99.as_secs_f64()),
        p99,
        secs(us),
        false,
    );
    let shown = |m: &Measured| format!("{} shown", m.progress_shown);
    compare(
        &mut t,
        format!(
            "progress, Deploy × {} (ours {}; Go {})",
            s.progress,
            shown(ours),
            go.map_or_else(|| "–".into(), shown)
        ),
        ours.progress_per_s,
        g(|m| m.progress_per_s),
        None,
        |v| format!("{:.0}k msg/s", v / 1e3),
        true,
    );
    t.row(vec![
        "progress as azd receives it".into(),
        ours.progress_order.to_string(),
        go.map_or_else(|| "not measured".into(), |m| m.progress_order.to_string()),
        "–".into(),
        "–".into(),
    ]);
    let kib = |v: f64| mib(v as u64);
    compare(
        &mut t,
        format!("idle RSS after Ready (median of {runs})"),
        ours.idle_rss_kib as f64,
        g(|m| m.idle_rss_kib as f64),
        None,
        kib,
        false,
    );
    compare(
        &mut t,
        "RSS after the State and Deploy runs".into(),
        ours.rss_after_kib as f64,
        g(|m| m.rss_after_kib as f64),
        None,
        kib,
        false,
    );
    let bytes = |v: f64| mb(v as u64);
    compare(
        &mut t,
        "binary, stripped as packaged".into(),
        ours.sizes.stripped as f64,
        g(|m| m.sizes.stripped as f64),
        None,
        bytes,
        false,
    );
    compare(
        &mut t,
        "packaged archive (.tar.gz; ours with component, manifest and precompiled code)".into(),
        ours.sizes.archive as f64,
        g(|m| m.sizes.archive as f64),
        None,
        bytes,
        false,
    );
    if let (Some(r), Some(i)) = (ours.cold_ready, ours.cold_initialize) {
        t.row(vec![
            "first start after install: spawn → Ready, then first Initialize".into(),
            format!("{} + {}", ms(r), ms(i)),
            "–".into(),
            "–".into(),
            "–".into(),
        ]);
    }
    t.print();
}

/// The sidecar `scripts/bench.sh` built alone (no compilers, its shipping profile):
/// `BENCH_SIDECAR`.
fn sidecar() -> anyhow::Result<PathBuf> {
    let path = PathBuf::from(std::env::var_os("BENCH_SIDECAR").context(
        "BENCH_SIDECAR is not set: run scripts/bench.sh, which builds the sidecar and names it",
    )?);
    anyhow::ensure!(
        path.is_file(),
        "{} is not built: run scripts/bench.sh",
        path.display()
    );
    Ok(path)
}

/// The provider of `manifest` (named `name`) packaged with the sidecar for this machine and
/// unpacked into `work/azd-config/extensions/<id>`, as `azd extension install` lays it out; returns the
/// folder and the archive.
fn install(
    root: &Path,
    manifest: &Path,
    name: &str,
    work: &Path,
) -> anyhow::Result<(PathBuf, PathBuf)> {
    let yaml = std::fs::read_to_string(root.join("extension.yaml"))?
        .replace("  - name: localfiles\n", &format!("  - name: {name}\n"));
    let extension = work.join("extension.yaml");
    std::fs::write(&extension, &yaml)?;
    let dist = work.join("dist");
    let here = azd_wasm_host_runtime::this_platform();
    let out = Command::new(env!("CARGO_BIN_EXE_azd-wasm-host"))
        // Signed with the key `package` makes in this trust folder, which the starts below trust.
        .env("AZD_CONFIG_DIR", work.join("azd-config"))
        .arg("package")
        .arg(manifest)
        .arg("--extension")
        .arg(&extension)
        .arg("--out")
        .arg(&dist)
        .arg("--host")
        .arg(format!("{here}={}", sidecar()?.display()))
        .output()?;
    anyhow::ensure!(
        out.status.success(),
        "package failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let archive = dist.join(format!("azd-wasm-host-{}.tar.gz", here.replace('/', "-")));
    // In azd's config folder (the trust folder `package` signed with), in a folder named as the
    // extension, as azd installs it: the sidecar takes azd's config folder from where it is
    // installed, and checks the signed extension id against the folder's name.
    let id = yaml
        .lines()
        .find_map(|l| l.strip_prefix("id:"))
        .map(|v| v.trim().to_owned())
        .context("extension.yaml names no id")?;
    let installed = work.join("azd-config").join("extensions").join(id);
    std::fs::create_dir_all(&installed)?;
    anyhow::ensure!(
        Command::new("tar")
            .arg("xzf")
            .arg(&archive)
            .arg("-C")
            .arg(&installed)
            .status()?
            .success(),
        "cannot unpack {}",
        archive.display()
    );
    Ok((installed, archive))
}

/// The C bench provider as users get it: packaged, installed, started as azd starts it
/// (no manifest named: the one beside the binary), with a new HOME and an empty cache.
fn our_subject(root: &Path, work: &Path) -> anyhow::Result<Subject> {
    let manifest = root.join("scripts/bench/c-provider/provider.toml");
    let component = root.join("scripts/bench/c-provider/build/bench-c.wasm");
    anyhow::ensure!(
        component.exists(),
        "{} is not built: run scripts/bench.sh (or scripts/build-examples.sh bench-c)",
        component.display()
    );
    let (installed, archive) = install(root, &manifest, PROVIDER, work)?;
    let home = work.join("home");
    std::fs::create_dir_all(&home)?;
    Ok(Subject {
        label: "azd-wasm-host",
        program: installed.join("azd-wasm-host"),
        env: vec![
            ("HOME".into(), home.to_string_lossy().into_owned()),
            (
                "AZD_CONFIG_DIR".into(),
                work.join("azd-config").to_string_lossy().into_owned(),
            ),
            (
                "AZD_WASM_HOST_CACHE_DIR".into(),
                work.join("cache").to_string_lossy().into_owned(),
            ),
            ("AZD_ENVIRONMENT".into(), "bench".into()),
        ],
        archive: Some(archive),
    })
}

/// `infra.config` of the Python example's sample project.
fn python_config(root: &Path) -> anyhow::Result<serde_json::Map<String, serde_json::Value>> {
    let yaml = std::fs::read_to_string(root.join("examples/python-localfiles/project/azure.yaml"))?;
    let value: serde_json::Value = serde_norway::from_str(&yaml)?;
    value["infra"]["config"]
        .as_object()
        .cloned()
        .context("the Python example's azure.yaml has no infra.config")
}

/// The 19 MB Python example installed anew for each of `runs` starts (new HOME, empty cache):
/// the medians of spawn → Ready and of the first Initialize.
async fn python_cold_install(root: &Path, runs: usize) -> anyhow::Result<(Duration, Duration)> {
    let manifest = root.join("examples/python-localfiles/provider.toml");
    anyhow::ensure!(
        root.join("examples/python-localfiles/build/python-localfiles.wasm")
            .is_file(),
        "the Python example is not built: run scripts/build-examples.sh python-localfiles"
    );
    let (mut ready, mut init) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let work = tempfile::tempdir()?;
        let (installed, _) = install(root, &manifest, "localfiles", work.path())?;
        // Its grants (folders, azd's environment and prompt) allowed once, as CI allows them.
        let approved = Command::new(installed.join("azd-wasm-host"))
            .arg("approve")
            .env("AZD_CONFIG_DIR", work.path().join("azd-config"))
            .output()?;
        anyhow::ensure!(
            approved.status.success(),
            "approve failed: {}",
            String::from_utf8_lossy(&approved.stderr)
        );
        let home = work.path().join("home");
        let project = work.path().join("project");
        std::fs::create_dir_all(&home)?;
        std::fs::create_dir_all(&project)?;
        let sim = SimAzd::start(SimOptions::default()).await?;
        let mut cmd = tokio::process::Command::new(installed.join("azd-wasm-host"));
        cmd.env("HOME", &home)
            .env("AZD_CONFIG_DIR", work.path().join("azd-config"))
            .env("AZD_WASM_HOST_CACHE_DIR", work.path().join("cache"))
            .env("AZD_ENVIRONMENT", "bench");
        let t = Instant::now();
        let mut process = sim.spawn_extension(cmd).await?;
        ready.push(t.elapsed());
        let handle = sim.provider("localfiles", Duration::from_secs(5)).await?;
        let config = python_config(root)?;
        let t = Instant::now();
        handle
            .initialize(
                &project.to_string_lossy(),
                pb::ProvisioningOptions {
                    provider: "localfiles".into(),
                    config: Some(azd_wasm_host_core::json::object_to_struct(&config)),
                    ..Default::default()
                },
            )
            .await?;
        init.push(t.elapsed());
        anyhow::ensure!(
            !work.path().join("cache").exists(),
            "the installed sidecar compiled (it wrote a compile cache)"
        );
        sim.close_streams();
        let _ = process.wait(Duration::from_secs(10)).await;
        sim.shutdown().await;
    }
    Ok((median(&mut ready), median(&mut init)))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // RUST_LOG=azd_wasm_host_sim=debug shows the simulated azd's view of each stream.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let settings = Settings {
        runs: env_usize("BENCH_RUNS", 20).max(1),
        requests: env_usize("BENCH_REQUESTS", 10_000).max(1),
        progress: env_usize("BENCH_PROGRESS", 100_000).max(1),
    };
    eprintln!(
        "azd-wasm-host vs azd's Go SDK ({} cores)",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let work = tempfile::tempdir()?;
    let ours_subject = our_subject(&root, work.path())?;
    let go_subject = std::env::var_os("BENCH_GO_EXTENSION").map(|program| Subject {
        label: "Go SDK extension",
        program: PathBuf::from(program),
        env: Vec::new(),
        archive: None,
    });
    if go_subject.is_none() {
        eprintln!(
            "BENCH_GO_EXTENSION is not set: the Go column is left out (scripts/bench.sh builds it)"
        );
    }
    let subjects: Vec<&Subject> = std::iter::once(&ours_subject)
        .chain(go_subject.as_ref())
        .collect();
    let mut measured = measure(&subjects, &settings).await?.into_iter();
    let ours = measured.next().context("no measurement of ours")?;
    let go = measured.next();
    let o = ours.progress_order;
    anyhow::ensure!(
        o.in_order && o.last_shown && o.late == 0,
        "azd-wasm-host broke its progress guarantee: {o}"
    );
    let floor = raw_ping_pong(settings.requests).await?;
    print(&ours, go.as_ref(), &floor, &settings);
    let runs = settings.runs.min(5);
    let (ready, init) = python_cold_install(&root, runs).await?;
    println!();
    let mut t = Table::new(&["19 MB Python example, installed from its package", "result"]);
    t.row(vec![
        format!("new HOME, empty cache: spawn → Ready (median of {runs})"),
        ms(ready),
    ]);
    t.row(vec![
        format!("new HOME, empty cache: first Initialize (median of {runs})"),
        ms(init),
    ]);
    t.print();
    Ok(())
}
