//! Which recorded exchange answers a request on replay, and, when none does,
//! the nearest recorded request and how it differs.
//!
//! A request matches a recorded one when its method, URI and body are the
//! same (both redacted alike); headers are not compared. Each recorded
//! exchange answers once, in recorded order among equal requests, so a
//! provider that asks the same thing twice gets the two answers it got then.

use super::exchange::{Exchange, RecordedRequest};

/// A request no recorded exchange answers.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Miss {
    /// `METHOD URI` of the request made.
    pub request: String,
    /// `METHOD URI` of the closest recorded request, if any was recorded.
    pub nearest: Option<String>,
    /// How the request differs from the nearest (empty when none).
    pub difference: String,
}

impl std::fmt::Display for Miss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "no recorded answer for {}", self.request)?;
        match &self.nearest {
            Some(nearest) => write!(f, "; nearest recorded: {nearest} ({})", self.difference),
            None => write!(f, "; the cassette holds no request for this step"),
        }
    }
}

/// The index of the first unused exchange of `recorded` that answers `request`.
pub(crate) fn find(
    recorded: &[Exchange],
    used: &[bool],
    request: &RecordedRequest,
) -> Option<usize> {
    recorded.iter().enumerate().position(|(i, e)| {
        !used.get(i).copied().unwrap_or(false)
            && e.request.method == request.method
            && e.request.uri == request.uri
            && e.request.body == request.body
    })
}

/// Why `request` has no answer: the nearest recorded request (unused ones
/// first) and what differs.
pub(crate) fn miss(recorded: &[Exchange], used: &[bool], request: &RecordedRequest) -> Miss {
    let nearest = recorded
        .iter()
        .enumerate()
        .min_by_key(|(i, e)| {
            let reused = used.get(*i).copied().unwrap_or(false);
            (distance(&e.request, request), reused)
        })
        .map(|(i, e)| (i, &e.request));
    Miss {
        request: request.line(),
        nearest: nearest.map(|(_, r)| r.line()),
        difference: nearest.map_or_else(String::new, |(i, r)| {
            let mut d = differences(r, request);
            if d.is_empty() && used.get(i).copied().unwrap_or(false) {
                d.push("the same request, already answered: it was recorded fewer times".into());
            }
            d.join("; ")
        }),
    }
}

/// How far apart two requests are: what a person would call "more different".
fn distance(a: &RecordedRequest, b: &RecordedRequest) -> usize {
    let (pa, qa) = split(&a.uri);
    let (pb, qb) = split(&b.uri);
    let query = qa.iter().filter(|p| !qb.contains(p)).count()
        + qb.iter().filter(|p| !qa.contains(p)).count();
    usize::from(a.method != b.method) * 8
        + usize::from(pa != pb) * 16
        + query
        + usize::from(a.body != b.body) * 2
}

/// Each way `made` differs from `recorded`, in words.
fn differences(recorded: &RecordedRequest, made: &RecordedRequest) -> Vec<String> {
    let mut out = Vec::new();
    if recorded.method != made.method {
        out.push(format!(
            "method {} where {} was recorded",
            made.method, recorded.method
        ));
    }
    let (pr, qr) = split(&recorded.uri);
    let (pm, qm) = split(&made.uri);
    if pr != pm {
        out.push(format!("path {pm} where {pr} was recorded"));
    }
    for extra in qm.iter().filter(|p| !qr.contains(p)) {
        out.push(format!("query {extra} not recorded"));
    }
    for gone in qr.iter().filter(|p| !qm.contains(p)) {
        out.push(format!("query {gone} recorded, not sent"));
    }
    if recorded.body != made.body {
        out.push(body_difference(recorded, made));
    }
    out
}

/// The URI without its query, and the query's `k=v` pairs.
fn split(uri: &str) -> (&str, Vec<&str>) {
    match uri.split_once('?') {
        Some((path, query)) => (path, query.split('&').filter(|p| !p.is_empty()).collect()),
        None => (uri, Vec::new()),
    }
}

/// Where two bodies part, with a little of each.
fn body_difference(recorded: &RecordedRequest, made: &RecordedRequest) -> String {
    let a = recorded.body.bytes().unwrap_or_default();
    let b = made.body.bytes().unwrap_or_default();
    let at = a.iter().zip(b.iter()).take_while(|(x, y)| x == y).count();
    let excerpt = |bytes: &[u8]| {
        let end = (at + 40).min(bytes.len());
        String::from_utf8_lossy(&bytes[at.min(end)..end]).into_owned()
    };
    format!(
        "body differs at byte {at} ({} bytes sent, {} recorded): sent {:?}, recorded {:?}",
        b.len(),
        a.len(),
        excerpt(&b),
        excerpt(&a)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::exchange::{RecordedBody, RecordedResponse};

    fn req(method: &str, uri: &str, body: &str) -> RecordedRequest {
        RecordedRequest {
            method: method.into(),
            uri: uri.into(),
            headers: vec![("x-ms-date".into(), "ignored".into())],
            body: RecordedBody::of(body.as_bytes()),
        }
    }

    fn ex(r: RecordedRequest, status: u16) -> Exchange {
        Exchange {
            request: r,
            response: RecordedResponse {
                status,
                headers: vec![],
                body: RecordedBody::default(),
            },
        }
    }

    #[test]
    fn equal_requests_are_answered_in_recorded_order_and_once_each() {
        let recorded = [
            ex(req("GET", "http://h/a?comp=list", ""), 200),
            ex(req("PUT", "http://h/a/web", ""), 201),
            ex(req("GET", "http://h/a?comp=list", ""), 404),
        ];
        let mut used = vec![false; 3];
        let mut asked = req("GET", "http://h/a?comp=list", "");
        asked.headers.clear(); // headers are not compared
        let first = find(&recorded, &used, &asked).unwrap();
        assert_eq!(first, 0);
        used[first] = true;
        assert_eq!(find(&recorded, &used, &asked), Some(2));
        used[2] = true;
        assert_eq!(find(&recorded, &used, &asked), None);
        let m = miss(&recorded, &used, &asked);
        assert!(m.difference.contains("fewer times"), "{m}");
    }

    #[test]
    fn a_miss_names_the_nearest_request_and_each_difference() {
        let recorded = [
            ex(req("PUT", "http://h/a/web?restype=container", ""), 201),
            ex(
                req("POST", "http://h/Tables", "{\"TableName\":\"audit\"}"),
                201,
            ),
        ];
        let used = [false, false];
        let m = miss(
            &recorded,
            &used,
            &req("PUT", "http://h/a/web?restype=container&x=1", ""),
        );
        assert_eq!(
            m.nearest.as_deref(),
            Some("PUT http://h/a/web?restype=container")
        );
        assert_eq!(m.difference, "query x=1 not recorded");
        let m = miss(
            &recorded,
            &used,
            &req("POST", "http://h/Tables", "{\"TableName\":\"audits\"}"),
        );
        assert!(m.difference.starts_with("body differs at byte 19"), "{m}");
        assert!(
            m.to_string()
                .starts_with("no recorded answer for POST http://h/Tables; nearest")
        );
        let m = miss(&[], &[], &req("GET", "http://h/", ""));
        assert!(m.nearest.is_none() && m.to_string().contains("holds no request"));
    }
}
