//! The HTTP side of [`Traffic`]: what the gate calls for a granted request.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use wasmtime_wasi_http::{Error, WasiBody};

use super::control::{LogEvent, Traffic, TrafficMode};
use super::exchange::{Exchange, RecordedBody, RecordedRequest, RecordedResponse};
use super::fault::Effect;
use super::keep::{self, Judge, Part};
use super::matching;
use super::redact::Secrets;

use azd_wasm_host_runtime::{Intercept, Io, Live, Sending, Sent};

/// The most of a request body kept for recording or matching.
const MAX_REQUEST_BODY: usize = 64 << 20;

impl Intercept for Traffic {
    fn keep_secret(&self, value: &str) {
        Traffic::keep_secret(self, value);
    }

    fn tokens(
        self: Arc<Self>,
        azd: Option<Arc<dyn azd_wasm_host_core::TokenSource>>,
    ) -> Option<Arc<dyn azd_wasm_host_core::TokenSource>> {
        Traffic::tokens(&self, azd)
    }

    fn send(self: Arc<Self>, request: http::Request<WasiBody>, limit: u64, live: Live) -> Sending {
        Box::pin(self.serve(request, limit, live))
    }
}

impl Traffic {
    /// Answers a request the policy admitted: a fault's answer, a recorded
    /// one, or `live`'s (recorded when recording). `limit` bounds a response
    /// body read whole for recording.
    pub(crate) async fn serve<F, Fut>(
        self: Arc<Self>,
        request: http::Request<WasiBody>,
        limit: u64,
        live: F,
    ) -> Sent
    where
        F: FnOnce(http::Request<WasiBody>) -> Fut,
        Fut: Future<Output = Sent>,
    {
        let fault = self
            .plan
            .faults
            .iter()
            .position(|f| f.applies(request.method(), request.uri()));
        if let Some(i) = fault {
            let line = format!(
                "{} {}",
                request.method(),
                self.secrets.lock().uri(&request.uri().to_string())
            );
            tracing::debug!(request = %line, fault = %self.plan.faults[i].describe(), "guest HTTP request faulted by the test");
            self.log(&LogEvent::Faulted {
                fault: i,
                request: line,
            });
            return match self.plan.faults[i].effect() {
                Effect::Answer(r) => Ok((r.map(whole), done())),
                Effect::Fail(e) => Err(e),
            };
        }
        match self.plan.mode {
            TrafficMode::Live => live(request).await,
            TrafficMode::Replay => self.replay(request).await,
            TrafficMode::Record => self.record(request, limit, live).await,
        }
    }

    /// Replay: the first unused recorded exchange with this method, URI and body.
    async fn replay(&self, request: http::Request<WasiBody>) -> Sent {
        let (parts, body) = request.into_parts();
        let bytes = read_request_body(body).await?;
        let asked = self.recorded_request(&parts, &bytes);
        let found = {
            let mut used = self.used.lock();
            let found = matching::find(&self.plan.exchanges, &used, &asked);
            match found {
                Some(i) => {
                    used[i] = true;
                    Ok(i)
                }
                None => Err(matching::miss(&self.plan.exchanges, &used, &asked)),
            }
        };
        match found {
            Ok(index) => {
                self.log(&LogEvent::Served { index });
                let response = &self.plan.exchanges[index].response;
                Ok((answer(response)?, done()))
            }
            Err(miss) => {
                tracing::debug!("{miss}");
                let message = miss.to_string();
                self.log(&LogEvent::Missed { miss });
                Err(Error::InternalError(Some(format!("replay: {message}"))))
            }
        }
    }

    /// Record: sends `request` with `live`, reads the answer whole, writes
    /// both, or that they could not be kept (the guest gets the answer as
    /// the service gave it either way).
    async fn record<F, Fut>(&self, request: http::Request<WasiBody>, limit: u64, live: F) -> Sent
    where
        F: FnOnce(http::Request<WasiBody>) -> Fut,
        Fut: Future<Output = Sent>,
    {
        let (parts, body) = request.into_parts();
        let bytes = read_request_body(body).await?;
        let line = self.secrets.lock().line(&parts);
        let judge = Judge::Record {
            safe: &self.plan.safe,
            request: &line,
        };
        let recorded = self.kept_request(&parts, &bytes, judge);
        let (response, io) = live(http::Request::from_parts(parts, whole(bytes))).await?;
        // The connection runs on its own while the body is read whole.
        let connection = tokio::spawn(Box::into_pin(io));
        let (head, body) = response.into_parts();
        let body = read_capped(body, limit).await?;
        let answered = self.kept_response(&head, &body, limit, judge);
        let event = match (recorded, answered) {
            (Ok(request), Ok(response)) => LogEvent::Recorded {
                exchange: Exchange { request, response },
            },
            (Err(why), _) | (_, Err(why)) => {
                tracing::warn!(request = %line, "the recording is refused: {why}");
                LogEvent::Refused { request: line, why }
            }
        };
        self.log(&event);
        let io: Io = Box::new(async move {
            connection
                .await
                .map_err(|e| Error::InternalError(Some(format!("connection task: {e}"))))?
        });
        Ok((http::Response::from_parts(head, whole(body)), io))
    }

    /// The request as a replay compares it, redacted as a recording was.
    fn recorded_request(&self, parts: &http::request::Parts, body: &[u8]) -> RecordedRequest {
        let kept = self.kept_request(parts, body, Judge::Replay);
        // A replay refuses nothing (`Judge::Replay`).
        kept.unwrap_or_else(|_| RecordedRequest {
            method: parts.method.as_str().to_owned(),
            uri: self.secrets.lock().uri(&parts.uri.to_string()),
            headers: Vec::new(),
            body: RecordedBody::default(),
        })
    }

    /// The request as a cassette holds it, redacted, or why it cannot be kept.
    fn kept_request(
        &self,
        parts: &http::request::Parts,
        body: &[u8],
        judge: Judge<'_>,
    ) -> Result<RecordedRequest, String> {
        let secrets = self.secrets.lock();
        let part = Part {
            side: "request",
            headers: &parts.headers,
            bytes: body,
            max: MAX_REQUEST_BODY,
            bound: "the recorder's 64 MiB bound on a request body",
        };
        let kept = keep::keep(&secrets, &part, judge)?;
        Ok(RecordedRequest {
            method: parts.method.as_str().to_owned(),
            uri: secrets.uri(&parts.uri.to_string()),
            headers: stored_headers(&secrets, &parts.headers, kept.decoded),
            body: kept.body,
        })
    }

    /// The answer as a cassette holds it, redacted, or why it cannot be kept.
    fn kept_response(
        &self,
        head: &http::response::Parts,
        body: &[u8],
        limit: u64,
        judge: Judge<'_>,
    ) -> Result<RecordedResponse, String> {
        let secrets = self.secrets.lock();
        let bound = format!("the provider's `max_response_bytes`, {limit}");
        let part = Part {
            side: "response",
            headers: &head.headers,
            bytes: body,
            max: usize::try_from(limit).unwrap_or(usize::MAX),
            bound: &bound,
        };
        let kept = keep::keep(&secrets, &part, judge)?;
        Ok(RecordedResponse {
            status: head.status.as_u16(),
            headers: stored_headers(&secrets, &head.headers, kept.decoded),
            body: kept.body,
        })
    }
}

/// A message's headers as a recording stores them (redacted), without
/// `Content-Encoding` when its body is stored decoded.
fn stored_headers(
    secrets: &Secrets,
    headers: &http::HeaderMap,
    decoded: bool,
) -> Vec<(String, String)> {
    let mut stored = secrets.headers(headers);
    if decoded {
        stored.retain(|(name, _)| name != http::header::CONTENT_ENCODING.as_str());
    }
    stored
}

/// A whole body, as `wasi:http` carries bodies.
fn whole(bytes: Bytes) -> WasiBody {
    Full::new(bytes)
        .map_err(|never: Infallible| match never {})
        .boxed_unsync()
}

/// A connection with nothing left to do.
fn done() -> Io {
    Box::new(async { Ok(()) })
}

/// The recorded response, as the guest receives it.
fn answer(recorded: &RecordedResponse) -> Result<http::Response<WasiBody>, Error> {
    let bad =
        |what: String| Error::InternalError(Some(format!("replay: the cassette's answer {what}")));
    let body = recorded.body.bytes().map_err(|e| bad(e.to_string()))?;
    let mut response = http::Response::builder().status(recorded.status);
    for (name, value) in &recorded.headers {
        response = response.header(name, value);
    }
    response
        .header(http::header::CONTENT_LENGTH, body.len())
        .body(whole(body))
        .map_err(|e| bad(format!("is not a valid response: {e}")))
}

/// The guest's request body, whole.
async fn read_request_body(body: WasiBody) -> Result<Bytes, Error> {
    let bytes = read_capped(body, MAX_REQUEST_BODY as u64).await;
    bytes.map_err(|e| match e {
        Error::HttpResponseBodySize(n) => Error::HttpRequestBodySize(n),
        other => other,
    })
}

/// A body read whole, failing with `HTTP-response-body-size` past `limit`.
async fn read_capped(mut body: WasiBody, limit: u64) -> Result<Bytes, Error> {
    let mut out = Vec::new();
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame?.into_data() {
            if (out.len() + data.len()) as u64 > limit {
                return Err(Error::HttpResponseBodySize(None));
            }
            out.extend_from_slice(&data);
        }
    }
    Ok(Bytes::from(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::{HttpFault, TrafficPlan, read_log};

    fn request(uri: &str, body: &'static str) -> http::Request<WasiBody> {
        http::Request::builder()
            .method("PUT")
            .uri(uri)
            .header("authorization", "SharedKey acct:c2lnbmF0dXJl")
            .header("x-ms-date", "Fri, 04 Dec 2026 01:00:00 GMT")
            .body(whole(Bytes::from_static(body.as_bytes())))
            .unwrap()
    }

    /// A service that answers 201 with the request's body echoed and a secret in a header.
    async fn service(request: http::Request<WasiBody>) -> Sent {
        let body = read_capped(request.into_body(), 1 << 20).await?;
        let response = http::Response::builder()
            .status(201)
            .header("set-cookie", "session=abc")
            .header("transfer-encoding", "chunked")
            .body(whole(body))
            .unwrap();
        Ok((response, done()))
    }

    fn traffic(
        dir: &std::path::Path,
        mode: TrafficMode,
        exchanges: Vec<Exchange>,
        faults: Vec<HttpFault>,
    ) -> Arc<Traffic> {
        Traffic::new(TrafficPlan {
            mode,
            log: dir.join("log.jsonl"),
            exchanges,
            tokens: vec![],
            faults,
            safe: vec![],
        })
        .unwrap()
    }

    async fn body_of(sent: Sent) -> (u16, Bytes) {
        let (response, _) = sent.unwrap();
        let status = response.status().as_u16();
        (
            status,
            read_capped(response.into_body(), 1 << 20).await.unwrap(),
        )
    }

    #[tokio::test]
    async fn a_recording_replays_to_the_same_answers_with_no_service() {
        let dir = tempfile::tempdir().unwrap();
        let rec = traffic(dir.path(), TrafficMode::Record, vec![], vec![]);
        rec.keep_secret("account-key-value");
        let sent = Arc::clone(&rec)
            .serve(
                request("http://127.0.0.1:1/a?sig=s3cret", "k=account-key-value"),
                1 << 20,
                service,
            )
            .await;
        assert_eq!(
            body_of(sent).await,
            (201, Bytes::from_static(b"k=account-key-value"))
        );
        let log = read_log(&dir.path().join("log.jsonl")).unwrap();
        let [LogEvent::Recorded { exchange }] = log.as_slice() else {
            panic!("{log:?}")
        };
        let text = serde_json::to_string(exchange).unwrap();
        for secret in ["c2lnbmF0dXJl", "s3cret", "account-key-value", "session=abc"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        assert!(!text.contains("transfer-encoding"), "{text}");

        let replay_dir = tempfile::tempdir().unwrap();
        let rep = traffic(
            replay_dir.path(),
            TrafficMode::Replay,
            vec![exchange.clone()],
            vec![],
        );
        rep.keep_secret("account-key-value");
        let never = |_| async { panic!("replay sent a request") };
        let sent = Arc::clone(&rep)
            .serve(
                request("http://127.0.0.1:1/a?sig=other", "k=account-key-value"),
                1 << 20,
                never,
            )
            .await;
        // The answer as recorded (its secrets redacted), whatever the signature.
        assert_eq!(
            body_of(sent).await,
            (201, Bytes::from_static(b"k=REDACTED"))
        );
        // Each recorded answer serves once.
        let again = Arc::clone(&rep)
            .serve(
                request("http://127.0.0.1:1/a?sig=x", "k=account-key-value"),
                1 << 20,
                never,
            )
            .await;
        let Err(Error::InternalError(Some(message))) = again.map(drop) else {
            panic!("a miss")
        };
        assert!(message.contains("fewer times"), "{message}");
        let log = read_log(&replay_dir.path().join("log.jsonl")).unwrap();
        assert_eq!(log[0], LogEvent::Served { index: 0 });
        assert!(matches!(log[1], LogEvent::Missed { .. }));
    }

    #[tokio::test]
    async fn a_fault_answers_in_place_of_the_service_in_every_mode() {
        let dir = tempfile::tempdir().unwrap();
        let fault: HttpFault =
            toml::from_str("origin = \"http://127.0.0.1:1\"\nstatus = 403\nbody = \"no\"").unwrap();
        for mode in [TrafficMode::Live, TrafficMode::Record, TrafficMode::Replay] {
            let t = traffic(dir.path(), mode, vec![], vec![fault.clone()]);
            let never = |_| async { panic!("a faulted request went out") };
            let sent = Arc::clone(&t)
                .serve(request("http://127.0.0.1:1/x", ""), 1 << 20, never)
                .await;
            assert_eq!(body_of(sent).await, (403, Bytes::from_static(b"no")));
            // Another origin is not taken.
            let other = Arc::clone(&t)
                .serve(request("http://127.0.0.1:2/x", ""), 1 << 20, service)
                .await;
            if mode != TrafficMode::Replay {
                assert_eq!(body_of(other).await.0, 201);
            }
        }
        let faulted = read_log(&dir.path().join("log.jsonl")).unwrap();
        assert_eq!(
            faulted
                .iter()
                .filter(|e| matches!(e, LogEvent::Faulted { fault: 0, .. }))
                .count(),
            3
        );
    }

    #[tokio::test]
    async fn an_answer_over_the_limit_fails_while_recording() {
        let dir = tempfile::tempdir().unwrap();
        let t = traffic(dir.path(), TrafficMode::Record, vec![], vec![]);
        let sent = Arc::clone(&t)
            .serve(request("http://127.0.0.1:1/x", "0123456789"), 4, service)
            .await;
        assert!(matches!(
            sent.map(drop),
            Err(Error::HttpResponseBodySize(_))
        ));
    }
}
