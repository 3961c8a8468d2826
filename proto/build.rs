//! Generates the tonic/prost code for `azdext` with a vendored protoc, so no system
//! install is needed.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    let include = protoc_bin_vendored::include_path()?;
    // SAFETY of intent: build scripts are single-threaded; tonic-prost-build reads PROTOC.
    #[allow(
        unsafe_code,
        reason = "set_var is unsafe in edition 2024; build.rs is single-threaded"
    )]
    unsafe {
        std::env::set_var("PROTOC", protoc);
    }
    let files = [
        std::path::PathBuf::from("azdext/errors.proto"),
        std::path::PathBuf::from("azdext/extension.proto"),
        std::path::PathBuf::from("azdext/provisioning.proto"),
    ];
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_protos(&files, &[std::path::PathBuf::from("."), include.clone()])?;
    Ok(())
}
