//! Generates the simulated azd's `ProvisioningService` server with a codec of
//! its own (`crate::wire::BytesOutCodec`): the real azd sends only what its
//! protobuf library writes, but the simulated one must also be able to send
//! arbitrary bytes, to show what the extension does with a message that is
//! not what it expects. The other services are the proto crate's.

fn main() {
    let stream = tonic_build::manual::Method::builder()
        .name("stream")
        .route_name("Stream")
        .input_type("azd_wasm_host_proto::azdext::ProvisioningMessage")
        .output_type("crate::wire::ToExtension")
        .codec_path("crate::wire::BytesOutCodec")
        .client_streaming()
        .server_streaming()
        .build();
    let service = tonic_build::manual::Service::builder()
        .name("ProvisioningService")
        .package("azdext")
        .method(stream)
        .build();
    tonic_build::manual::Builder::new()
        .build_client(false)
        .build_transport(false)
        .compile(&[service]);
}
