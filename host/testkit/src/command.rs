//! The `test` command: its arguments, the test files and golden conversations
//! it finds (each a [`Case`]), each provider compiled once, then the cases run
//! `--jobs` at a time, each printing its line, and the summary.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use azd_wasm_host_core::Exit;

use crate::exec::Case;
use crate::spec::{Invalid, Spec};
use crate::{cassette, conversation, exec, golden, results, summary};

/// Arguments of `test`.
#[derive(Debug, clap::Args)]
pub struct TestArgs {
    /// Test files, or folders whose `*.test.toml` (and `tests/*.test.toml`) are run.
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// How to print the results.
    #[arg(long, short = 'o', value_enum, default_value_t = azd_wasm_host_runner::Output::Table)]
    pub output: azd_wasm_host_runner::Output,
    /// Also write the results as JUnit XML to this file.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Tests run at once (default: one per core).
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
    /// Run only the tests whose name contains this text.
    #[arg(long)]
    pub filter: Option<String>,
    /// Run against the real services and write each test's cassette (only
    /// for a test that passes), credentials redacted.
    #[arg(long, conflicts_with = "live")]
    pub record: bool,
    /// Run against the real services even where a cassette exists.
    #[arg(long)]
    pub live: bool,
    /// Accept the answers that changed in golden conversations
    /// (`*.conversation.jsonl`): write this build's answers into them.
    #[arg(long)]
    pub update: bool,
}

/// Runs `test`; the exit code says how it ended.
pub async fn test(args: TestArgs, debug: bool) -> ExitCode {
    let cases = match find_cases(&args) {
        Ok(cases) => cases,
        Err(e) => {
            eprintln!("azd-wasm-host test: {e:#}");
            return Exit::Usage.into();
        }
    };
    let started = std::time::Instant::now();
    let broken = compile_once(&cases).await;
    let results = run_all(cases, &args, broken, debug).await;
    let summary = summary::Summary::new(results, started.elapsed());
    summary.print(args.output);
    if let Some(path) = &args.junit
        && let Err(e) = summary.write_junit(path)
    {
        eprintln!("azd-wasm-host test: cannot write {}: {e:#}", path.display());
        return Exit::Failed.into();
    }
    Exit::holds(summary.all_passed()).into()
}

/// Reads every test file the arguments name; the first invalid one ends it.
fn find_cases(args: &TestArgs) -> anyhow::Result<Vec<Case>> {
    let mut files = Vec::new();
    for path in &args.paths {
        if path.is_dir() {
            for dir in [path.clone(), path.join("tests")] {
                files.extend(test_files(&dir)?);
            }
        } else if path.is_file() {
            files.push(path.clone());
        } else {
            anyhow::bail!("{}: no such test file or folder", path.display());
        }
    }
    files.sort();
    files.dedup();
    let mut cases = Vec::new();
    for file in files {
        let case = if is_conversation(&file) {
            conversation_case(file)?
        } else {
            steps_case(file, args)?
        };
        if args
            .filter
            .as_ref()
            .is_none_or(|f| case.name.contains(f.as_str()))
        {
            cases.push(case);
        }
    }
    if cases.is_empty() {
        anyhow::bail!(
            "no test found in {} (test files are named *.test.toml, beside the provider or in its \
             tests/ folder)",
            args.paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(cases)
}

/// A test file read: its steps, its provider and how its traffic runs.
fn steps_case(file: PathBuf, args: &TestArgs) -> Result<Case, Invalid> {
    let spec = Spec::read(&file)?;
    let name = spec.name.clone().unwrap_or_else(|| stem(&file));
    let provider = provider_of(&file, &spec)?;
    let provider_name = provider_name(&file, &provider)?;
    let cassette = cassette::path_for(&file, spec.cassette.as_deref());
    let traffic = cassette::mode(cassette, args.record, args.live).map_err(|e| Invalid {
        path: file.clone(),
        message: format!("{e:#}"),
    })?;
    Ok(Case {
        file,
        name,
        spec,
        provider,
        provider_name,
        traffic,
        conversation: None,
    })
}

/// A golden conversation read, with the provider beside it (or above).
fn conversation_case(file: PathBuf) -> Result<Case, Invalid> {
    let invalid = |message: String| Invalid {
        path: file.clone(),
        message,
    };
    let conversation =
        conversation::Conversation::read(&file).map_err(|e| invalid(format!("{e:#}")))?;
    let spec = Spec::default();
    let provider = provider_of(&file, &spec)?;
    let provider_name = provider_name(&file, &provider)?;
    if provider_name != conversation.provider {
        return Err(invalid(format!(
            "recorded with the provider `{}`, but {} is `{provider_name}`",
            conversation.provider,
            provider.display()
        )));
    }
    Ok(Case {
        name: stem(&file),
        file,
        spec,
        provider,
        provider_name,
        traffic: cassette::Mode::Live,
        conversation: Some(conversation),
    })
}

/// The name `provider` registers (azure.yaml's `infra.provider`).
fn provider_name(file: &Path, provider: &Path) -> Result<String, Invalid> {
    azd_wasm_host_manifest::Manifest::resolve(provider, None)
        .map(|m| m.name)
        .map_err(|e| Invalid {
            path: file.to_owned(),
            message: format!(
                "the provider {}: {}",
                provider.display(),
                azd_wasm_host_core::report::chain(&e)
            ),
        })
}

fn is_conversation(file: &Path) -> bool {
    file.to_string_lossy().ends_with(conversation::SUFFIX)
}

/// The `*.test.toml` files directly in `dir` (none if it does not exist).
fn test_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut files = Vec::new();
    for entry in entries {
        let path = entry?.path();
        let named = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with(".test.toml") || n.ends_with(conversation::SUFFIX));
        if named && path.is_file() {
            files.push(path);
        }
    }
    Ok(files)
}

fn stem(file: &Path) -> String {
    let name = file.file_name().unwrap_or_default().to_string_lossy();
    name.strip_suffix(".test.toml")
        .or_else(|| name.strip_suffix(conversation::SUFFIX))
        .unwrap_or(&name)
        .to_owned()
}

/// The provider a test drives: its `provider`, else `provider.toml` beside
/// the file, else in the folder above (a `tests/` folder's).
fn provider_of(file: &Path, spec: &Spec) -> Result<PathBuf, Invalid> {
    let base = file.parent().unwrap_or(Path::new("."));
    let candidates = match &spec.provider {
        Some(p) => vec![base.join(p)],
        None => vec![
            base.join("provider.toml"),
            base.join("..").join("provider.toml"),
        ],
    };
    candidates
        .iter()
        .find_map(|p| std::fs::canonicalize(p).ok())
        .ok_or_else(|| Invalid {
            path: file.to_owned(),
            message: format!(
                "no provider: {} does not exist (name it with `provider = \"…\"`)",
                candidates[0].display()
            ),
        })
}

/// Compiles each provider once, before its tests start them in parallel
/// (each would otherwise compile it at the same time); the providers whose
/// component cannot load, with why.
async fn compile_once(cases: &[Case]) -> Vec<(PathBuf, String)> {
    let mut providers: Vec<PathBuf> = cases.iter().map(|c| c.provider.clone()).collect();
    providers.sort();
    providers.dedup();
    let cache = azd_wasm_host_sidecar::env::compile_cache();
    let mut broken = Vec::new();
    for provider in providers {
        let cache = cache.clone();
        let path = provider.clone();
        let checked = tokio::task::spawn_blocking(move || {
            let dir = cache.as_ref().map(|c| c.dir());
            if azd_wasm_host_runtime::is_compiled(&path, dir) {
                return Ok(());
            }
            eprintln!(
                "Compiling {} for this machine (once; cached)…",
                path.display()
            );
            let opts = azd_wasm_host_runtime::RuntimeOptions {
                cache,
                ..Default::default()
            };
            azd_wasm_host_runtime::check(&path, &opts)
                .map(drop)
                .context("check failed")
        })
        .await
        .context("the compile stopped unexpectedly")
        .and_then(|r| r);
        if let Err(e) = checked {
            broken.push((provider, format!("{e:#}")));
        }
    }
    broken
}

/// Runs the tests, `--jobs` at a time, printing each one's line as it ends;
/// their results in the order of the files.
async fn run_all(
    cases: Vec<Case>,
    args: &TestArgs,
    broken: Vec<(PathBuf, String)>,
    debug: bool,
) -> Vec<results::TestResult> {
    let jobs = args
        .jobs
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(1)
        .max(1);
    let gate = Arc::new(tokio::sync::Semaphore::new(jobs));
    let broken = Arc::new(broken);
    let total = cases.len();
    let named: Vec<(String, PathBuf)> = cases
        .iter()
        .map(|c| (c.name.clone(), c.file.clone()))
        .collect();
    let mut tasks = tokio::task::JoinSet::new();
    for (index, case) in cases.into_iter().enumerate() {
        let (gate, broken, update) = (gate.clone(), broken.clone(), args.update);
        tasks.spawn(async move {
            let _turn = gate.acquire_owned().await;
            let result = match broken.iter().find(|(p, _)| *p == case.provider) {
                Some((_, why)) => exec::not_started(&case, why),
                None => match &case.conversation {
                    Some(c) => {
                        golden::run(&case.name, &case.file, &case.provider, c, update, debug).await
                    }
                    None => exec::run(&case, debug).await,
                },
            };
            (index, result)
        });
    }
    let mut results: Vec<Option<results::TestResult>> = (0..total).map(|_| None).collect();
    let mut done = 0;
    while let Some(joined) = tasks.join_next().await {
        let Ok((index, result)) = joined else {
            continue;
        };
        done += 1;
        summary::line(&result, done, total);
        results[index] = Some(result);
    }
    // A test whose task died still has its result: failed, saying so.
    results
        .into_iter()
        .zip(named)
        .map(|(r, (name, file))| {
            r.unwrap_or_else(|| {
                results::TestResult::stopped(name, file, "the test stopped unexpectedly")
            })
        })
        .collect()
}
