//! What both benchmarks share: percentiles and units, the printed table, the raw tonic
//! floor and a process's resident memory.

#![allow(dead_code, reason = "each benchmark uses its own part of this module")]

use std::pin::Pin;
use std::time::{Duration, Instant};

use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_proto::azdext::provisioning_service_client::ProvisioningServiceClient;
use azd_wasm_host_proto::server::provisioning_service_server::{
    ProvisioningService, ProvisioningServiceServer,
};
use futures::Stream;
use tokio_stream::StreamExt as _;

pub(crate) fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The value below which a fraction `p` of the sorted samples lie.
pub(crate) fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

/// Sorts `samples` and returns their median.
pub(crate) fn median(samples: &mut [Duration]) -> Duration {
    samples.sort();
    percentile(samples, 0.5)
}

pub(crate) fn us(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

pub(crate) fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

pub(crate) fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

pub(crate) fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

/// A Markdown table: a header, then rows of cells, each also printed to stderr as it is
/// measured (so a long run shows progress).
pub(crate) struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub(crate) fn new(header: &[&str]) -> Self {
        Self {
            header: header.iter().map(|h| (*h).to_owned()).collect(),
            rows: Vec::new(),
        }
    }

    pub(crate) fn row(&mut self, cells: Vec<String>) {
        eprintln!("  {}", cells.join(" | "));
        self.rows.push(cells);
    }

    pub(crate) fn print(&self) {
        let columns = self.header.len();
        let width: Vec<usize> = (0..columns)
            .map(|c| {
                self.rows
                    .iter()
                    .filter_map(|r| r.get(c))
                    .chain(std::iter::once(&self.header[c]))
                    .map(|s| s.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |cells: &[String]| {
            let padded: Vec<String> = (0..columns)
                .map(|c| {
                    let cell = cells.get(c).map_or("", String::as_str);
                    format!("{cell:<w$}", w = width[c])
                })
                .collect();
            println!("| {} |", padded.join(" | "));
        };
        println!();
        line(&self.header);
        let rule: Vec<String> = width.iter().map(|w| "-".repeat(*w)).collect();
        println!("|-{}-|", rule.join("-|-"));
        for r in &self.rows {
            line(r);
        }
    }
}

/// The raw baseline: a ProvisioningService that answers every message at once.
struct Echo;

type EchoStream =
    Pin<Box<dyn Stream<Item = Result<pb::ProvisioningMessage, tonic::Status>> + Send>>;

#[tonic::async_trait]
impl ProvisioningService for Echo {
    type StreamStream = EchoStream;
    async fn stream(
        &self,
        req: tonic::Request<tonic::Streaming<pb::ProvisioningMessage>>,
    ) -> Result<tonic::Response<EchoStream>, tonic::Status> {
        let inbound = req.into_inner();
        Ok(tonic::Response::new(Box::pin(inbound.map(|m| m))))
    }
}

/// `n` sequential state requests echoed by a bare tonic server over loopback: the floor
/// any extension's round trip sits on. Returns the sorted round-trip times.
pub(crate) async fn raw_ping_pong(n: usize) -> anyhow::Result<Vec<Duration>> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let server = tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(ProvisioningServiceServer::new(Echo))
            .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
    );
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))?
        .tcp_nodelay(true)
        .connect()
        .await?;
    let mut client = ProvisioningServiceClient::new(channel);
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    let mut inbound = client
        .stream(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await?
        .into_inner();
    let mut times = Vec::with_capacity(n);
    for i in 0..n {
        let msg = pb::ProvisioningMessage {
            request_id: i.to_string(),
            error: None,
            message_type: Some(pb::provisioning_message::MessageType::StateRequest(
                pb::ProvisioningStateRequest {
                    options: Some(pb::ProvisioningStateOptions { hint: "h".into() }),
                    provider_name: "quick".into(),
                },
            )),
        };
        let t = Instant::now();
        tx.send(msg).await?;
        let back = inbound
            .message()
            .await?
            .ok_or_else(|| anyhow::anyhow!("eof"))?;
        times.push(t.elapsed());
        anyhow::ensure!(back.request_id == i.to_string(), "echo out of order");
    }
    drop(tx);
    server.abort();
    times.sort();
    Ok(times)
}

/// Resident memory of process `pid` in KiB (Linux; `None` elsewhere).
pub(crate) fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}
