//! Checks a step's result against its expectations: every difference is
//! reported (not only the first), each naming what was expected and what came.

use std::collections::BTreeMap;
use std::path::Path;

use azd_wasm_host_runner::{Plan, Question, RunError, RunReport};
use serde_json::Value;

use super::spec::{ErrorSpec, Expect, Match, MatchHow, PlanSpec};

/// What a step produced: the run's report (what `run --output json` prints),
/// and the project after it.
pub(super) struct Outcome<'a> {
    pub(super) report: &'a RunReport,
    pub(super) dotenv: &'a BTreeMap<String, String>,
    pub(super) project: &'a Path,
}

/// Every way `outcome` differs from `expect`; empty when it passes.
pub(super) fn check(expect: &Expect, outcome: &Outcome<'_>) -> Vec<String> {
    let mut failures = Vec::new();
    let report = outcome.report;
    match (&expect.error, &report.error) {
        (None, Some(e)) => failures.push(format!("the command failed ({}): {}", e.kind, e.message)),
        (Some(_), None) => failures.push("the command succeeded; an error was expected".into()),
        (Some(want), Some(got)) => check_error(want, got, &mut failures),
        (None, None) => {}
    }
    let outputs = report.outputs.as_ref();
    for (name, m) in &expect.outputs {
        let got = outputs.and_then(|o| o.get(name)).map(|v| v.value.as_str());
        compare(&format!("output {name}"), m, got, &mut failures);
    }
    if let Some(want) = &expect.output_names {
        let mut got: Vec<&String> = outputs.into_iter().flat_map(|o| o.keys()).collect();
        let mut want: Vec<&String> = want.iter().collect();
        got.sort();
        want.sort();
        if got != want {
            failures.push(format!("output names: expected {want:?}, got {got:?}"));
        }
    }
    if let Some(plan) = &expect.plan {
        let got = report.preview.as_ref().map(|p| p.plan);
        check_plan(plan, got.as_ref(), &mut failures);
    }
    check_progress(&expect.progress, &report.progress, &mut failures);
    if let Some(want) = &expect.prompts {
        check_prompts(want, &report.prompts, &mut failures);
    }
    for (key, m) in &expect.dotenv {
        let got = outcome.dotenv.get(key).map(String::as_str);
        compare(&format!(".env {key}"), m, got, &mut failures);
    }
    for (path, m) in &expect.files {
        let got = std::fs::read_to_string(outcome.project.join(path)).ok();
        compare(&format!("file {path}"), m, got.as_deref(), &mut failures);
    }
    check_answers(expect, report, &mut failures);
    failures
}

/// What the answers of provision, state, parameters and down carry besides outputs.
fn check_answers(expect: &Expect, report: &RunReport, failures: &mut Vec<String>) {
    if let Some(want) = expect.skipped {
        let got = report.skipped.unwrap_or(false);
        if got != want {
            failures.push(format!("skipped: expected {want}, got {got}"));
        }
    }
    if let Some(want) = &expect.resources {
        let got: &[String] = report.resources.as_deref().unwrap_or_default();
        for m in want {
            if !got.iter().any(|r| fits(m, Some(r)).is_ok()) {
                failures.push(format!("resources: none is {} (got {got:?})", describe(m)));
            }
        }
        if got.len() != want.len() {
            failures.push(format!(
                "resources: expected {}, got {} ({got:?})",
                want.len(),
                got.len()
            ));
        }
    }
    let parameters = report.parameters.as_deref().unwrap_or_default();
    for (name, m) in &expect.parameters {
        let got = parameters
            .iter()
            .find(|p| &p.name == name)
            .map(|p| p.value.as_str());
        compare(&format!("parameter {name}"), m, got, failures);
    }
    if let Some(want) = &expect.planned_outputs {
        let got: &[String] = report.planned_outputs.as_deref().unwrap_or_default();
        if got != want.as_slice() {
            failures.push(format!("planned outputs: expected {want:?}, got {got:?}"));
        }
    }
    if let Some(want) = &expect.invalidated_env_keys {
        let mut got = report.invalidated_env_keys.clone().unwrap_or_default();
        let mut want = want.clone();
        got.sort();
        want.sort();
        if got != want {
            failures.push(format!(
                "invalidated .env keys: expected {want:?}, got {got:?}"
            ));
        }
    }
}

fn check_error(want: &ErrorSpec, got: &RunError, failures: &mut Vec<String>) {
    if let Some(kind) = &want.kind
        && got.kind.as_str() != kind
    {
        failures.push(format!(
            "error kind: expected {kind:?}, got {:?} ({})",
            got.kind.as_str(),
            got.message
        ));
    }
    let fields = [
        ("code", &want.code, got.code.as_deref()),
        ("category", &want.category, got.category.as_deref()),
        ("message", &want.message, Some(got.message.as_str())),
        ("suggestion", &want.suggestion, got.suggestion.as_deref()),
    ];
    for (field, m, value) in fields {
        if let Some(m) = m {
            compare(&format!("error {field}"), m, value, failures);
        }
    }
    if let Some(status) = want.status {
        let got_status = got.status_code.map(i64::from);
        if got_status != Some(status) {
            failures.push(format!(
                "error status: expected {status}, got {}",
                got_status.map_or("none".into(), |s| s.to_string())
            ));
        }
    }
}

fn check_plan(want: &PlanSpec, got: Option<&Plan>, failures: &mut Vec<String>) {
    let Some(got) = got else {
        failures.push("plan: the command reported no preview".into());
        return;
    };
    let kinds = [
        ("create", want.create, got.create),
        ("modify", want.modify, got.modify),
        ("delete", want.delete, got.delete),
        ("unchanged", want.unchanged, got.unchanged),
        ("other", want.other, got.other),
    ];
    for (kind, n, got_n) in kinds {
        let Some(n) = n else { continue };
        if u64::try_from(got_n).ok() != Some(n) {
            failures.push(format!("plan: expected {n} to {kind}, got {got_n}"));
        }
    }
}

/// Each expected message in order, others allowed between.
fn check_progress(want: &[Match], got: &[String], failures: &mut Vec<String>) {
    let mut from = 0;
    for m in want {
        match got[from..]
            .iter()
            .position(|line| fits(m, Some(line)).is_ok())
        {
            Some(i) => from += i + 1,
            None => {
                failures.push(format!(
                    "progress: no message {} after the ones matched before it (got {got:?})",
                    describe(m)
                ));
                return;
            }
        }
    }
}

/// The questions asked, each matched by its message in order; `[]`: none.
fn check_prompts(want: &[Match], got: &[Question], failures: &mut Vec<String>) {
    let asked: Vec<String> = got
        .iter()
        .map(|q| {
            format!(
                "{} → {}",
                q.message,
                q.answer.as_deref().unwrap_or("(none)")
            )
        })
        .collect();
    if want.is_empty() && !got.is_empty() {
        failures.push(format!("prompts: none expected, asked {asked:?}"));
        return;
    }
    let mut from = 0;
    for m in want {
        match got[from..]
            .iter()
            .position(|q| fits(m, Some(&q.message)).is_ok())
        {
            Some(i) => from += i + 1,
            None => {
                failures.push(format!(
                    "prompts: no question {} after the ones matched before it (asked {asked:?})",
                    describe(m)
                ));
                return;
            }
        }
    }
}

/// Reports `what` when `got` does not fit `m`.
fn compare(what: &str, m: &Match, got: Option<&str>, failures: &mut Vec<String>) {
    if let Err(why) = fits(m, got) {
        failures.push(format!("{what}: {why}"));
    }
}

/// Whether `got` (`None`: it does not exist) fits `m`; else why not.
pub(super) fn fits(m: &Match, got: Option<&str>) -> Result<(), String> {
    let how = match m {
        Match::Equals(s) => &MatchHow {
            equals: Some(s.clone()),
            ..MatchHow::default()
        },
        Match::Number(n) => &MatchHow {
            equals: Some(n.to_string()),
            ..MatchHow::default()
        },
        Match::Bool(b) => &MatchHow {
            equals: Some(b.to_string()),
            ..MatchHow::default()
        },
        Match::How(how) => how,
    };
    let Some(got) = got else {
        return if how.absent {
            Ok(())
        } else {
            Err(format!("expected {}, but there is none", describe(m)))
        };
    };
    if how.absent {
        return Err(format!("expected none, got {got:?}"));
    }
    let value = match &how.json {
        None => got.to_owned(),
        Some(pointer) => {
            let doc: Value = serde_json::from_str(got)
                .map_err(|e| format!("{got:?} is not JSON ({e}); expected {}", describe(m)))?;
            match doc.pointer(pointer) {
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => return Err(format!("{got} has nothing at {pointer}")),
            }
        }
    };
    let ok = how.equals.as_ref().is_none_or(|e| *e == value)
        && how
            .contains
            .as_ref()
            .is_none_or(|c| value.contains(c.as_str()))
        && how
            .matches
            .as_ref()
            .is_none_or(|p| regex::Regex::new(p).is_ok_and(|re| re.is_match(&value)));
    if ok {
        Ok(())
    } else {
        Err(format!("expected {}, got {value:?}", describe(m)))
    }
}

/// `m` in words, for failure messages.
fn describe(m: &Match) -> String {
    match m {
        Match::Equals(s) => format!("{s:?}"),
        Match::Number(n) => n.to_string(),
        Match::Bool(b) => b.to_string(),
        Match::How(how) => {
            let mut parts = Vec::new();
            if let Some(p) = &how.json {
                parts.push(format!("at {p}"));
            }
            if let Some(e) = &how.equals {
                parts.push(format!("equal to {e:?}"));
            }
            if let Some(c) = &how.contains {
                parts.push(format!("containing {c:?}"));
            }
            if let Some(p) = &how.matches {
                parts.push(format!("matching /{p}/"));
            }
            if how.absent {
                parts.push("absent".into());
            }
            if parts.is_empty() {
                "any value".into()
            } else {
                parts.join(", ")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report as `run --output json` prints it.
    fn report(doc: &Value) -> RunReport {
        serde_json::from_value(doc.clone()).unwrap()
    }

    fn how(f: impl FnOnce(&mut MatchHow)) -> Match {
        let mut h = MatchHow::default();
        f(&mut h);
        Match::How(h)
    }

    #[test]
    fn matchers_hold_and_fail_as_written() {
        assert!(fits(&Match::Equals("a".into()), Some("a")).is_ok());
        assert!(fits(&Match::Equals("a".into()), Some("b")).is_err());
        assert!(fits(&Match::Equals("a".into()), None).is_err());
        assert!(fits(&Match::Number(13), Some("13")).is_ok());
        assert!(fits(&Match::Bool(true), Some("false")).is_err());
        let re = how(|h| h.matches = Some("^[0-9]+$".into()));
        assert!(fits(&re, Some("42")).is_ok());
        assert!(fits(&re, Some("4x2")).is_err());
        let absent = how(|h| h.absent = true);
        assert!(fits(&absent, None).is_ok());
        assert!(fits(&absent, Some("")).is_err());
        let json = how(|h| {
            h.json = Some("/a/1".into());
            h.equals = Some("y".into());
        });
        assert!(fits(&json, Some(r#"{"a":["x","y"]}"#)).is_ok());
        assert!(fits(&json, Some(r#"{"a":["x","z"]}"#)).is_err());
        assert!(fits(&json, Some("not json")).is_err());
        let num = how(|h| {
            h.json = Some("/n".into());
            h.equals = Some("3".into());
        });
        assert!(fits(&num, Some(r#"{"n":3}"#)).is_ok());
    }

    #[test]
    fn every_difference_is_reported() {
        let doc = serde_json::json!({
            "command": "provision",
            "outputs": { "GREETING": { "type": "string", "value": "Hello, world!" } },
            "progress": ["one", "two", "three"],
        });
        let dotenv = BTreeMap::from([("GREETING".to_owned(), "Hello, world!".to_owned())]);
        let dir = tempfile::tempdir().unwrap();
        let outcome = Outcome {
            report: &report(&doc),
            dotenv: &dotenv,
            project: dir.path(),
        };
        let mut expect = Expect::default();
        expect
            .outputs
            .insert("GREETING".into(), Match::Equals("Hello, world!".into()));
        expect.progress = vec![Match::Equals("one".into()), Match::Equals("three".into())];
        expect
            .dotenv
            .insert("GREETING".into(), Match::Equals("Hello, world!".into()));
        assert_eq!(check(&expect, &outcome), Vec::<String>::new());

        expect
            .outputs
            .insert("GREETING".into(), Match::Equals("Hi".into()));
        expect.progress = vec![Match::Equals("three".into()), Match::Equals("one".into())];
        expect
            .files
            .insert("out.txt".into(), Match::Equals("x".into()));
        expect.error = Some(ErrorSpec::default());
        let failures = check(&expect, &outcome);
        assert_eq!(failures.len(), 4, "{failures:#?}");
        assert!(failures[0].contains("succeeded"), "{failures:#?}");
        assert!(
            failures
                .iter()
                .any(|f| f.contains("output GREETING") && f.contains("\"Hi\"")),
            "{failures:#?}"
        );
    }

    #[test]
    fn an_unexpected_error_and_a_wrong_code_are_reported() {
        let doc = serde_json::json!({
            "command": "provision",
            "error": { "kind": "provider", "message": "no name", "code": "invalid_config", "category": "validation" },
        });
        let dotenv = BTreeMap::new();
        let outcome = Outcome {
            report: &report(&doc),
            dotenv: &dotenv,
            project: Path::new("/nonexistent"),
        };
        let failures = check(&Expect::default(), &outcome);
        assert!(failures[0].contains("no name"), "{failures:?}");
        let expect = Expect {
            error: Some(ErrorSpec {
                code: Some(Match::Equals("invalid_config".into())),
                kind: Some("provider".into()),
                ..ErrorSpec::default()
            }),
            ..Expect::default()
        };
        assert!(check(&expect, &outcome).is_empty());
        let expect = Expect {
            error: Some(ErrorSpec {
                code: Some(Match::Equals("other".into())),
                status: Some(403),
                ..ErrorSpec::default()
            }),
            ..Expect::default()
        };
        assert_eq!(check(&expect, &outcome).len(), 2);
    }

    #[test]
    fn output_names_are_all_accounted_for_and_an_empty_list_means_none() {
        let dotenv = BTreeMap::new();
        let dir = tempfile::tempdir().unwrap();
        let names = |want: &[&str]| Expect {
            output_names: Some(want.iter().map(|w| (*w).to_owned()).collect()),
            ..Expect::default()
        };
        let two = serde_json::json!({ "command": "state", "outputs": {
            "A": { "type": "string", "value": "x" }, "B": { "type": "number", "value": "1" } } });
        let outcome = Outcome {
            report: &report(&two),
            dotenv: &dotenv,
            project: dir.path(),
        };
        assert!(check(&names(&["B", "A"]), &outcome).is_empty());
        let failures = check(&names(&[]), &outcome);
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert!(
            failures[0].contains("expected []") && failures[0].contains("\"A\""),
            "{failures:?}"
        );
        assert_eq!(check(&names(&["A"]), &outcome).len(), 1);
        // An answer without outputs has none.
        let none = serde_json::json!({ "command": "state" });
        let outcome = Outcome {
            report: &report(&none),
            dotenv: &dotenv,
            project: dir.path(),
        };
        assert!(check(&names(&[]), &outcome).is_empty());
        assert_eq!(check(&names(&["A"]), &outcome).len(), 1);
    }

    #[test]
    fn resources_are_all_accounted_for_and_an_empty_list_means_none() {
        let doc = serde_json::json!({ "command": "state", "resources": ["a/web", "a/jobs"] });
        let dotenv = BTreeMap::new();
        let dir = tempfile::tempdir().unwrap();
        let outcome = Outcome {
            report: &report(&doc),
            dotenv: &dotenv,
            project: dir.path(),
        };
        let with = |want: Vec<&str>| Expect {
            resources: Some(want.into_iter().map(|w| Match::Equals(w.into())).collect()),
            ..Expect::default()
        };
        assert!(check(&with(vec!["a/jobs", "a/web"]), &outcome).is_empty());
        let fewer = check(&with(vec!["a/web"]), &outcome);
        assert_eq!(fewer.len(), 1, "{fewer:?}");
        assert!(
            fewer[0].starts_with("resources: expected 1, got 2"),
            "{fewer:?}"
        );
        assert_eq!(check(&with(vec![]), &outcome).len(), 1);
    }

    #[test]
    fn each_section_of_the_report_is_checked_where_run_json_puts_it() {
        let doc = serde_json::json!({
            "command": "preview",
            "preview": { "summary": "", "plan": { "create": 2, "modify": 0, "delete": 1,
                "unchanged": 0, "other": 0 }, "changes": [] },
            "parameters": [{ "name": "N", "secret": false, "value": "v", "envVarMapping": [] }],
            "plannedOutputs": ["A", "B"],
            "invalidatedEnvKeys": ["K"],
            "prompts": [{ "kind": "confirm", "message": "Delete it?", "answer": null }],
            "error": { "kind": "provider", "message": "denied", "code": "AuthorizationFailure",
                "statusCode": 403, "service": "blob" },
        });
        let dotenv = BTreeMap::new();
        let dir = tempfile::tempdir().unwrap();
        let outcome = Outcome {
            report: &report(&doc),
            dotenv: &dotenv,
            project: dir.path(),
        };
        let expect = |text: &str| -> Expect { toml::from_str(text).unwrap() };
        let holds = expect(
            "plan = { create = 2, delete = 1 }\nparameters = { N = \"v\" }\n\
             planned_outputs = [\"A\", \"B\"]\ninvalidated_env_keys = [\"K\"]\n\
             prompts = [{ contains = \"Delete\" }]\n\
             error = { kind = \"provider\", code = \"AuthorizationFailure\", status = 403 }\n",
        );
        assert_eq!(check(&holds, &outcome), Vec::<String>::new());
        let differs = expect(
            "plan = { create = 1 }\nparameters = { N = \"w\" }\n\
             planned_outputs = [\"B\", \"A\"]\ninvalidated_env_keys = []\nprompts = []\n\
             error = { kind = \"fault\", status = 404 }\n",
        );
        let failures = check(&differs, &outcome);
        assert_eq!(failures.len(), 7, "{failures:#?}");
        for part in [
            "plan: expected 1 to create, got 2",
            "parameter N",
            "planned outputs",
            "invalidated .env keys",
            "prompts: none expected, asked [\"Delete it? → (none)\"]",
            "error kind: expected \"fault\", got \"provider\" (denied)",
            "error status: expected 404, got 403",
        ] {
            assert!(
                failures.iter().any(|f| f.contains(part)),
                "{part}: {failures:#?}"
            );
        }
    }
}
