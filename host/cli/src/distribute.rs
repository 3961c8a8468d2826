//! What `package`, `publish` and `pull` print, and `pull --package`.

use azd_wasm_host_author as author;

/// `pull`, then `package` under `--package`.
pub(crate) async fn pull(
    args: crate::authoring::PullArgs,
) -> anyhow::Result<std::process::ExitCode> {
    let pulled = azd_wasm_host_author::pull(&args.options()).await?;
    println!(
        "pulled {} ({}) into {}",
        args.reference,
        pulled.digest,
        pulled.dir.display()
    );
    println!("{}", pulled.trust);
    if args.package {
        let package = azd_wasm_host_author::PackageOptions {
            manifest: Some(pulled.manifest.clone()),
            extension: None,
            out: None,
            base_url: None,
            no_precompile: false,
            hosts: Vec::new(),
            hosts_from: None,
            signing: azd_wasm_host_author::Signing {
                resign: args.resign,
                ..Default::default()
            },
        };
        let packaged =
            tokio::task::spawn_blocking(move || azd_wasm_host_author::package(&package)).await??;
        print_packaged(&packaged);
    } else {
        println!(
            "make it an azd extension source with: azd-wasm-host package {}",
            pulled.manifest.display()
        );
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// What `package` made, and the azd commands that install it, on stdout.
pub(crate) fn print_packaged(p: &author::Packaged) {
    let source = p.id.rsplit('.').next().unwrap_or(&p.id);
    println!("registry: {}", p.registry.display());
    for (platform, archive) in &p.archives {
        println!("archive:  {} ({platform})", archive.display());
    }
    println!("install with:");
    let registry = author::shell_word(&p.registry.display().to_string());
    println!("  azd extension source add -n {source} -t file -l {registry}");
    println!("  azd extension install {} --source {source}", p.id);
}
