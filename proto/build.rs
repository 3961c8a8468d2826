//! Generates the tonic/prost code for `azdext` with a vendored protoc, so no system
//! install is needed: the messages and the clients (what an extension uses) always,
//! the servers (what azd, or the simulated azd, serves) only with the `server` feature.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    let include = protoc_bin_vendored::include_path()?;
    #[allow(
        unsafe_code,
        reason = "set_var is unsafe in edition 2024; build.rs is single-threaded"
    )]
    // SAFETY: build scripts are single-threaded; tonic-prost-build reads PROTOC.
    unsafe {
        std::env::set_var("PROTOC", protoc);
    }
    let files = [
        PathBuf::from("azdext/errors.proto"),
        PathBuf::from("azdext/models.proto"),
        PathBuf::from("azdext/extension.proto"),
        PathBuf::from("azdext/environment.proto"),
        PathBuf::from("azdext/prompt.proto"),
        PathBuf::from("azdext/provisioning.proto"),
    ];
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    let includes = [PathBuf::from("."), include];
    let out = PathBuf::from(std::env::var("OUT_DIR")?);

    let client = out.join("client");
    std::fs::create_dir_all(&client)?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(false)
        .out_dir(&client)
        .compile_protos(&files, &includes)?;

    if std::env::var_os("CARGO_FEATURE_SERVER").is_some() {
        // Only the service traits: the messages are the ones generated above.
        let server = out.join("server");
        std::fs::create_dir_all(&server)?;
        tonic_prost_build::configure()
            .build_client(false)
            .build_server(true)
            .extern_path(".azdext", "crate::azdext")
            .out_dir(&server)
            .compile_protos(&files, &includes)?;
    }
    Ok(())
}
