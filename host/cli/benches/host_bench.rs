//! Baseline benchmarks; prints one table. Run with `scripts/bench.sh` (or
//! `cargo bench -p azd-wasm-host --bench host_bench`).
//!
//! - round trip p50/p99 of 10,000 small requests through the manager with a
//!   native provider, next to a raw tonic bidirectional ping-pong measured in
//!   the same run;
//! - progress throughput (messages per second, order checked);
//! - what finding azd's contract costs: connect → Ready against an azd serving
//!   `azd.extensions.v1` and against one serving only `azdext` (the first call
//!   refused, then made again);
//! - for each built example component: spawn→Ready with a cold and a warm
//!   compile cache, Initialize, per-call overhead, and the idle RSS of the
//!   `listen` process.
//!
//! Environment: `BENCH_REQUESTS` (default 10000), `BENCH_PROGRESS` (default
//! 100000).

#![allow(clippy::print_stdout, reason = "a benchmark prints its table")]
#![allow(clippy::unwrap_used, reason = "a benchmark may stop on a broken setup")]

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use azd_wasm_host_core::ProviderError;
use azd_wasm_host_core::{CallContext, Provider, ProviderFactory};
use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_provisioning::AzdClient;
use azd_wasm_host_provisioning::ProvisioningManager;
use azd_wasm_host_sim::{ContractMode, SimAzd, SimOptions};
use common::{Table, env_usize, ms, percentile, raw_ping_pong, rss_kib, us};
use tokio_util::sync::CancellationToken;

/// A two-column row.
fn kv(table: &mut Table, what: impl Into<String>, value: impl Into<String>) {
    table.row(vec![what.into(), value.into()]);
}

/// A provider that answers at once; deploy reports `n` progress messages.
struct Quick {
    progress: usize,
}

#[async_trait]
impl Provider for Quick {
    async fn initialize(
        &self,
        _p: &str,
        _o: pb::ProvisioningOptions,
        _c: CallContext,
    ) -> Result<(), ProviderError> {
        Ok(())
    }
    async fn state(
        &self,
        o: pb::ProvisioningStateOptions,
        _c: CallContext,
    ) -> Result<pb::ProvisioningStateResult, ProviderError> {
        let mut s = pb::ProvisioningState::default();
        s.outputs.insert(
            "H".into(),
            pb::ProvisioningOutputParameter {
                r#type: "string".into(),
                value: o.hint,
            },
        );
        Ok(pb::ProvisioningStateResult { state: Some(s) })
    }
    async fn deploy(&self, c: CallContext) -> Result<pb::ProvisioningDeployResult, ProviderError> {
        for i in 0..self.progress {
            c.progress.report(i.to_string());
        }
        Ok(pb::ProvisioningDeployResult::default())
    }
    async fn preview(
        &self,
        _c: CallContext,
    ) -> Result<pb::ProvisioningPreviewResult, ProviderError> {
        Ok(pb::ProvisioningPreviewResult::default())
    }
    async fn destroy(
        &self,
        _o: pb::ProvisioningDestroyOptions,
        _c: CallContext,
    ) -> Result<pb::ProvisioningDestroyResult, ProviderError> {
        Ok(pb::ProvisioningDestroyResult::default())
    }
    async fn ensure_env(&self, _c: CallContext) -> Result<(), ProviderError> {
        Ok(())
    }
    async fn parameters(
        &self,
        _c: CallContext,
    ) -> Result<Vec<pb::ProvisioningParameter>, ProviderError> {
        Ok(Vec::new())
    }
    async fn planned_outputs(
        &self,
        _c: CallContext,
    ) -> Result<Vec<pb::ProvisioningPlannedOutput>, ProviderError> {
        Ok(Vec::new())
    }
}

struct QuickFactory(usize);

#[async_trait]
impl ProviderFactory for QuickFactory {
    async fn create(&self) -> Result<Arc<dyn Provider>, ProviderError> {
        Ok(Arc::new(Quick { progress: self.0 }))
    }
}

async fn native_manager(n: usize, progress: usize, table: &mut Table) -> anyhow::Result<()> {
    let sim = SimAzd::start(SimOptions::default()).await?;
    let client = AzdClient::connect(&sim.address(), &sim.token()).await?;
    let manager = ProvisioningManager::new(client);
    manager
        .register(Arc::new(QuickFactory(progress)), "quick")
        .await?;
    let m = manager.clone();
    tokio::spawn(async move { m.receive(CancellationToken::new()).await });
    manager.ready().await?;
    let handle = sim.provider("quick", Duration::from_secs(5)).await?;
    handle
        .initialize(
            "/bench",
            pb::ProvisioningOptions {
                provider: "quick".into(),
                ..Default::default()
            },
        )
        .await?;
    // Warm-up.
    for _ in 0..200 {
        handle
            .state(pb::ProvisioningStateOptions::default())
            .await?;
    }
    let mut times = Vec::with_capacity(n);
    for i in 0..n {
        let t = Instant::now();
        let r = handle
            .state(pb::ProvisioningStateOptions {
                hint: i.to_string(),
            })
            .await?;
        times.push(t.elapsed());
        anyhow::ensure!(
            r.state
                .is_some_and(|s| s.outputs["H"].value == i.to_string()),
            "wrong answer"
        );
    }
    times.sort();
    let raw = {
        let mut r = raw_ping_pong(n).await?;
        r.sort();
        r
    };
    let (p50, p99) = (percentile(&times, 0.5), percentile(&times, 0.99));
    let (r50, r99) = (percentile(&raw, 0.5), percentile(&raw, 0.99));
    kv(
        table,
        format!("round trip, manager + native provider, p50 ({n} requests)"),
        us(p50),
    );
    kv(
        table,
        format!("round trip, manager + native provider, p99 ({n} requests)"),
        us(p99),
    );
    kv(table, "raw tonic bidi ping-pong, p50", us(r50));
    kv(table, "raw tonic bidi ping-pong, p99", us(r99));
    kv(
        table,
        "ratio manager / raw (p50, p99)",
        format!(
            "{:.2}×, {:.2}×",
            p50.as_secs_f64() / r50.as_secs_f64().max(1e-9),
            p99.as_secs_f64() / r99.as_secs_f64().max(1e-9)
        ),
    );

    // Progress is paced so that azd shows it in order: a flood is thinned to
    // the first steps and the latest. The row is how fast reports go through
    // to the deploy's answer; order and the latest step are checked.
    let mut shown = Vec::new();
    let t = Instant::now();
    handle
        .deploy(|p| shown.push(p.message.parse::<usize>().unwrap_or(usize::MAX)))
        .await?;
    let took = t.elapsed();
    anyhow::ensure!(
        shown.windows(2).all(|w| w[0] < w[1]) && shown.last() == Some(&(progress - 1)),
        "progress out of order or the latest step lost"
    );
    kv(
        table,
        format!(
            "progress, deploy reporting {progress} steps ({} shown)",
            shown.len()
        ),
        format!("{:.0} reports/s", progress as f64 / took.as_secs_f64()),
    );
    anyhow::ensure!(handle.late_messages() == 0, "messages after the answer");
    sim.shutdown().await;
    Ok(())
}

/// connect → register → Ready against a simulated azd serving `mode`, `runs` times;
/// the median.
async fn to_ready(mode: ContractMode, runs: usize) -> anyhow::Result<Duration> {
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let sim = SimAzd::start(SimOptions {
            contract: mode,
            ..SimOptions::default()
        })
        .await?;
        let t = Instant::now();
        let client = AzdClient::connect(&sim.address(), &sim.token()).await?;
        let manager = ProvisioningManager::new(client);
        manager.register(Arc::new(QuickFactory(0)), "quick").await?;
        let m = manager.clone();
        let serving = tokio::spawn(async move { m.receive(CancellationToken::new()).await });
        manager.ready().await?;
        times.push(t.elapsed());
        sim.shutdown().await;
        let _ = serving.await;
    }
    times.sort();
    Ok(percentile(&times, 0.5))
}

/// What finding azd's contract costs: at most one round trip, once, against an azd
/// that serves only `azdext`.
async fn contract_choice(table: &mut Table) -> anyhow::Result<()> {
    let runs = env_usize("BENCH_CONTRACT_RUNS", 50);
    let v1 = to_ready(ContractMode::Both, runs).await?;
    let legacy = to_ready(ContractMode::Legacy, runs).await?;
    kv(
        table,
        format!("connect → Ready, azd serving azd.extensions.v1 (median of {runs})"),
        us(v1),
    );
    kv(
        table,
        format!("connect → Ready, azd serving only azdext (median of {runs})"),
        us(legacy),
    );
    kv(
        table,
        "the fallback to azdext (one refused stream, once)",
        us(legacy.saturating_sub(v1)),
    );
    Ok(())
}

fn cached_artifacts(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "cwasm"))
            .count()
    })
}

/// The example's `infra.config` from its sample project, else `{"name": "bench"}`
/// (what the small examples require).
fn example_config(manifest: &Path) -> prost_types::Struct {
    let yaml = manifest
        .parent()
        .map(|d| d.join("project/azure.yaml"))
        .and_then(|p| std::fs::read_to_string(p).ok());
    let config = yaml
        .and_then(|y| serde_norway::from_str::<serde_json::Value>(&y).ok())
        .and_then(|v| v.get("infra")?.get("config").cloned())
        .unwrap_or_else(|| serde_json::json!({ "name": "bench" }));
    let empty = serde_json::Map::new();
    azd_wasm_host_core::json::object_to_struct(config.as_object().unwrap_or(&empty))
}

async fn component(name: &str, manifest: &Path, table: &mut Table) -> anyhow::Result<()> {
    let bin = env!("CARGO_BIN_EXE_azd-wasm-host");
    let cache = tempfile::tempdir()?;
    let project = tempfile::tempdir()?;
    let (provider_name, size) = {
        #[derive(serde::Deserialize)]
        struct N {
            name: String,
            component: PathBuf,
        }
        let n: N = toml::from_str(&std::fs::read_to_string(manifest)?)?;
        let wasm = manifest
            .parent()
            .unwrap_or(Path::new("."))
            .join(&n.component);
        let size = std::fs::metadata(&wasm)?.len();
        kv(
            table,
            format!("{name}: component size"),
            format!("{:.1} MB", size as f64 / 1e6),
        );
        (n.name, size)
    };
    // A cold start of a big component runs the baseline compiler's code and compiles the
    // optimised code into the cache behind it (two artifacts); the cold process stays up
    // until that is done, as it would through a whole `azd provision`.
    let artifacts = if size >= 4 << 20 && cfg!(target_arch = "x86_64") {
        2
    } else {
        1
    };
    for (label, runs) in [("cold cache", 1), ("warm cache", 5)] {
        let mut best = Duration::MAX;
        let mut init = Duration::MAX;
        let mut call = Duration::MAX;
        let mut rss = 0;
        for _ in 0..runs {
            let sim = SimAzd::start(SimOptions::default()).await?;
            let mut cmd = tokio::process::Command::new(bin);
            cmd.env("AZD_WASM_HOST_MANIFEST", manifest)
                .env("AZD_WASM_HOST_CACHE_DIR", cache.path())
                .env("AZD_ENVIRONMENT", "bench");
            let t = Instant::now();
            let mut proc = sim.spawn_extension(cmd).await?;
            best = best.min(t.elapsed());
            let h = sim.provider(&provider_name, Duration::from_secs(5)).await?;
            let t = Instant::now();
            let ok = h
                .initialize(
                    &project.path().to_string_lossy(),
                    pb::ProvisioningOptions {
                        provider: provider_name.clone(),
                        config: Some(example_config(manifest)),
                        ..Default::default()
                    },
                )
                .await;
            if let Err(e) = &ok {
                eprintln!("  {name}: initialize failed: {e}");
            }
            init = init.min(t.elapsed());
            if ok.is_ok() {
                let mut calls = Vec::new();
                for _ in 0..200 {
                    let t = Instant::now();
                    let _ = h.planned_outputs().await;
                    calls.push(t.elapsed());
                }
                calls.sort();
                call = call.min(percentile(&calls, 0.5));
            }
            if let Some(pid) = proc.id() {
                rss = rss_kib(pid).unwrap_or(0);
            }
            let filled = Instant::now();
            while cached_artifacts(cache.path()) < artifacts
                && filled.elapsed() < Duration::from_secs(300)
            {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            sim.close_streams();
            let _ = proc.wait(Duration::from_secs(5)).await;
            sim.shutdown().await;
        }
        kv(table, format!("{name}: spawn→Ready, {label}"), ms(best));
        if label == "cold cache" {
            // Ready comes before the compile; the first Initialize waits for it.
            kv(
                table,
                format!("{name}: first Initialize after Ready, cold cache (waits for the compile)"),
                ms(init),
            );
        }
        if label == "warm cache" {
            kv(
                table,
                format!("{name}: Initialize (instantiate + guest initialize)"),
                ms(init),
            );
            if call != Duration::MAX {
                kv(
                    table,
                    format!("{name}: planned-outputs round trip p50 (per-call)"),
                    us(call),
                );
            }
            kv(
                table,
                format!("{name}: idle RSS of listen"),
                format!("{:.1} MiB", rss as f64 / 1024.0),
            );
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // `cargo bench` passes `--bench`; nothing to parse.
    let n = env_usize("BENCH_REQUESTS", 10_000);
    let progress = env_usize("BENCH_PROGRESS", 100_000);
    let mut table = Table::new(&["measurement", "result"]);
    eprintln!(
        "azd-wasm-host benchmarks ({} cores)",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    native_manager(n, progress, &mut table).await?;
    contract_choice(&mut table).await?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for name in ["c-hello", "js-hello", "python-localfiles", "rust-hello"] {
        let manifest = root.join("examples").join(name).join("provider.toml");
        let built = root
            .join("examples")
            .join(name)
            .join("build")
            .join(format!("{name}.wasm"));
        if !built.exists() {
            eprintln!("  {name}: not built (scripts/build-examples.sh), skipped");
            continue;
        }
        if let Err(e) = component(name, &manifest, &mut table).await {
            kv(&mut table, format!("{name}: failed"), format!("{e:#}"));
        }
    }
    table.print();
    Ok(())
}
