//! What every language module gives: its [`Guest`], and what its recipe is
//! given ([`Recipe`]).

use std::path::Path;

use serde::Deserialize;

use crate::templates::File;

/// What the toolchain knows of one language.
pub(crate) struct Guest {
    /// Its name in `new` and in `[build] language` (what the CLI and serde read).
    pub(crate) name: &'static str,
    /// Its name for people.
    pub(crate) title: &'static str,
    /// What a provider in it is built with, in a line (`new --help`).
    pub(crate) summary: &'static str,
    /// The files `new` writes for it besides every language's.
    pub(crate) files: &'static [File],
    /// The repository example its provider source comes from (its name is replaced).
    pub(crate) example: &'static str,
    /// The `memory_mb` of a new project's manifest.
    pub(crate) memory_mb: &'static str,
    /// Lines a new project's `[build]` section adds after `language`.
    pub(crate) build_extra: &'static str,
    /// Lines a new project's `.gitignore` adds.
    pub(crate) gitignore_extra: &'static str,
    /// What a new project's README says of building it.
    pub(crate) notes: &'static str,
    /// `build`'s recipe: makes the component at `recipe.staged`.
    pub(crate) build: fn(&Recipe<'_>) -> anyhow::Result<()>,
}

/// What a recipe is given.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Recipe<'a> {
    /// The manifest's folder.
    pub(crate) dir: &'a Path,
    /// `[build] source`, relative to it.
    pub(crate) source: Option<&'a str>,
    /// `[build] engine` (JavaScript only).
    pub(crate) engine: Option<JsEngine>,
    /// Where the component goes.
    pub(crate) staged: &'a Path,
}

/// The JavaScript engines `build` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum JsEngine {
    /// The Bytecode Alliance's ComponentizeJS (SpiderMonkey, as StarlingMonkey):
    /// `fetch` over wasi:http, files through wasi:filesystem, azd's credentials;
    /// a component of about 15 MB.
    ComponentizeJs,
    /// QuickJS through componentize-qjs: a component of about 1.7 MB that starts
    /// faster, with no file or network API.
    Quickjs,
}
