//! Generates the prost/tonic code for `azdext` with a vendored protoc, so no system
//! install is needed: the messages always (plain prost structs, no tonic), the
//! clients (what an extension uses) with the `client` feature, and the servers
//! (what azd, or the simulated azd, serves) with the `server` feature.

use std::path::{Path, PathBuf};

/// The files whose messages are generated: azd's, and the rich status its errors carry
/// details in (`google.rpc.Status`, which has no service).
fn messages_of(files: &[PathBuf]) -> Vec<PathBuf> {
    let mut all = files.to_vec();
    all.push(PathBuf::from("google/rpc/status.proto"));
    all
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    let include = protoc_bin_vendored::include_path()?;
    #[allow(
        unsafe_code,
        reason = "set_var is unsafe in edition 2024; build.rs is single-threaded"
    )]
    // SAFETY: build scripts are single-threaded; tonic-prost-build reads PROTOC.
    unsafe {
        std::env::set_var("PROTOC", &protoc);
    }
    let files = [
        PathBuf::from("azdext/errors.proto"),
        PathBuf::from("azdext/models.proto"),
        PathBuf::from("azdext/extension.proto"),
        PathBuf::from("azdext/environment.proto"),
        PathBuf::from("azdext/prompt.proto"),
        PathBuf::from("azdext/provisioning.proto"),
    ];
    for f in messages_of(&files) {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    let includes = [PathBuf::from("."), include];
    let out = PathBuf::from(std::env::var("OUT_DIR")?);

    let messages = out.join("messages");
    std::fs::create_dir_all(&messages)?;
    let mut typed = tonic_prost_build::Config::new();
    typed.enable_type_names();
    // Maps as BTreeMap: a message's maps (outputs, deployment stacks) iterate in key order,
    // so what is printed, compared (golden conversations) or sent is the same every time.
    typed.btree_map(["."]);
    tonic_prost_build::configure()
        .build_client(false)
        .build_server(false)
        // The schema, for reading azd's bytes without recursion (the host's
        // `inbound` walks it): protoc's FileDescriptorSet, imports included.
        .file_descriptor_set_path(messages.join("azdext.fds"))
        .out_dir(&messages)
        // `prost::Name`: the clients' codec finds each response's type by name.
        .compile_with_config(typed, &messages_of(&files), &includes)?;

    // azd's versioned package (`azd.extensions.v1`, expected in a release after 1.34): its
    // schema only. Its
    // bodies are the ones above (a test holds them to it), so the Rust types generated above
    // serve both packages; only method paths and type URLs differ (`crate::contract`).
    let v1: Vec<PathBuf> = files
        .iter()
        .map(|f| Path::new("azd/extensions/v1").join(f.file_name().unwrap_or_default()))
        .collect();
    for f in &v1 {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    let status = std::process::Command::new(&protoc)
        .arg("--include_imports")
        .arg(format!(
            "--descriptor_set_out={}",
            messages.join("v1.fds").display()
        ))
        .arg("-I.")
        .arg(format!("-I{}", includes[1].display()))
        .args(&v1)
        .status()?;
    if !status.success() {
        return Err(format!("protoc failed on azd/extensions/v1 ({status})").into());
    }

    // The services only: their messages are the ones generated above.
    for (feature, dir, client) in [
        ("CARGO_FEATURE_CLIENT", "client", true),
        ("CARGO_FEATURE_SERVER", "server", false),
    ] {
        if std::env::var_os(feature).is_none() {
            continue;
        }
        let dir = out.join(dir);
        std::fs::create_dir_all(&dir)?;
        tonic_prost_build::configure()
            .build_client(client)
            .build_server(!client)
            .extern_path(".azdext", "crate::azdext")
            // Responses are walked before prost reads them (`wire`).
            .codec_path(if client {
                "crate::wire::GuardedCodec"
            } else {
                "tonic_prost::ProstCodec"
            })
            .out_dir(&dir)
            .compile_protos(&files, &includes)?;
    }
    Ok(())
}
