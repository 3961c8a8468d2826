//! The tests [`TestOptions`] name: the test files and golden conversations
//! found (each a [`Case`]), each provider compiled once, then the cases run
//! `jobs` at a time, each printing its line, and their [`Summary`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use azd_wasm_host_runtime::CompileCache;

use crate::exec::{Case, Launch};
use crate::spec::{Invalid, Spec};
use crate::summary::Summary;
use crate::{cassette, conversation, exec, golden, results, summary};

/// What `test` runs, and how.
#[derive(Debug, Clone)]
pub struct TestOptions {
    /// Test files, or folders whose `*.test.toml` (and `tests/*.test.toml`) are run.
    pub paths: Vec<PathBuf>,
    /// Tests run at once (`None`: one per core).
    pub jobs: Option<usize>,
    /// Run only the tests whose name contains this text.
    pub filter: Option<String>,
    /// Run against the real services and write each test's cassette (only for a test
    /// that passes), credentials redacted.
    pub record: bool,
    /// Run against the real services even where a cassette exists.
    pub live: bool,
    /// Accept the answers that changed in golden conversations (`*.conversation.jsonl`):
    /// write this build's answers into them.
    pub update: bool,
    /// The program every step starts as the extension (`PROGRAM listen`, as azd starts
    /// one): a binary that serves the sidecar's `listen`, the development CLI.
    pub extension: PathBuf,
    /// Debug logs from the extensions.
    pub debug: bool,
    /// The compile cache the extensions use, in which each provider is compiled once before
    /// its tests start (`None`: each test's extension compiles it).
    pub compile_cache: Option<CompileCache>,
}

impl TestOptions {
    /// The tests in `paths`, each step starting `extension`; everything else as `test`
    /// has it by default.
    pub fn new(paths: Vec<PathBuf>, extension: PathBuf) -> Self {
        Self {
            paths,
            jobs: None,
            filter: None,
            record: false,
            live: false,
            update: false,
            extension,
            debug: false,
            compile_cache: None,
        }
    }
}

/// Runs the tests `options` name: each provider compiled once, then the tests `jobs` at
/// a time, each one's line printed on stderr as it ends. An error when none could start
/// (a test file that cannot be read, none found): nothing ran.
pub async fn run_tests(options: &TestOptions) -> anyhow::Result<Summary> {
    let cases = find_cases(options)?;
    let started = std::time::Instant::now();
    let broken = compile_once(&cases, options.compile_cache.as_ref()).await;
    let results = run_all(cases, options, broken).await;
    Ok(Summary::new(results, started.elapsed()))
}

/// Reads every test file the options name; the first invalid one ends it.
fn find_cases(args: &TestOptions) -> anyhow::Result<Vec<Case>> {
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
fn steps_case(file: PathBuf, args: &TestOptions) -> Result<Case, Invalid> {
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
async fn compile_once(cases: &[Case], cache: Option<&CompileCache>) -> Vec<(PathBuf, String)> {
    let mut providers: Vec<PathBuf> = cases.iter().map(|c| c.provider.clone()).collect();
    providers.sort();
    providers.dedup();
    let mut broken = Vec::new();
    for provider in providers {
        let cache = cache.cloned();
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

/// How many tests run at once: `jobs`, else one per core.
fn jobs(args: &TestOptions) -> usize {
    args.jobs
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(1)
        .max(1)
}

/// Runs the tests, `jobs` at a time, printing each one's line as it ends;
/// their results in the order of the files.
async fn run_all(
    cases: Vec<Case>,
    args: &TestOptions,
    broken: Vec<(PathBuf, String)>,
) -> Vec<results::TestResult> {
    let launch = Arc::new(Launch {
        extension: args.extension.clone(),
        debug: args.debug,
    });
    let gate = Arc::new(tokio::sync::Semaphore::new(jobs(args)));
    let broken = Arc::new(broken);
    let total = cases.len();
    let named: Vec<(String, PathBuf)> = cases
        .iter()
        .map(|c| (c.name.clone(), c.file.clone()))
        .collect();
    let mut tasks = tokio::task::JoinSet::new();
    for (index, case) in cases.into_iter().enumerate() {
        let (gate, broken, update, launch) =
            (gate.clone(), broken.clone(), args.update, launch.clone());
        tasks.spawn(async move {
            let _turn = gate.acquire_owned().await;
            let result = match broken.iter().find(|(p, _)| *p == case.provider) {
                Some((_, why)) => exec::not_started(&case, why),
                None => match &case.conversation {
                    Some(c) => {
                        golden::run(&case.name, &case.file, &case.provider, c, update, &launch)
                            .await
                    }
                    None => exec::run(&case, &launch).await,
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
