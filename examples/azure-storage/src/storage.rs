//! The Storage REST calls: list, create and delete a container, a queue or a table, each
//! signed by [`Signer`], each failure the service's own code and message.

use azd_provider_sdk::Error;
use azd_provider_sdk::http::{Request, Response};
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};

use crate::auth::Signer;

/// The REST API version every request asks for.
const VERSION: &str = "2021-12-02";
/// The most pages of one list (5000 names each: 10 million names).
const MAX_PAGES: usize = 2000;
/// The Table service's JSON, without OData metadata.
const TABLE_JSON: &str = "application/json;odata=nometadata";

/// What a provider manages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Container,
    Queue,
    Table,
}

impl Kind {
    /// The service's name in its host name (`blob`, `queue`, `table`).
    pub(crate) fn service(self) -> &'static str {
        match self {
            Self::Container => "blob",
            Self::Queue => "queue",
            Self::Table => "table",
        }
    }

    /// For messages: `container`, `queue`, `table`.
    pub(crate) fn noun(self) -> &'static str {
        match self {
            Self::Container => "container",
            Self::Queue => "queue",
            Self::Table => "table",
        }
    }

    /// Its list under infra.config.
    pub(crate) fn config_key(self) -> &'static str {
        match self {
            Self::Container => "containers",
            Self::Queue => "queues",
            Self::Table => "tables",
        }
    }

    /// The resource type a preview shows.
    pub(crate) fn resource_type(self) -> &'static str {
        match self {
            Self::Container => "Microsoft.Storage/storageAccounts/blobServices/containers",
            Self::Queue => "Microsoft.Storage/storageAccounts/queueServices/queues",
            Self::Table => "Microsoft.Storage/storageAccounts/tableServices/tables",
        }
    }

    /// Table names are case-insensitive; container and queue names are lower case.
    pub(crate) fn same_name(self, a: &str, b: &str) -> bool {
        match self {
            Self::Table => a.eq_ignore_ascii_case(b),
            _ => a == b,
        }
    }

    /// The service's naming rule.
    pub(crate) fn check_name(self, name: &str) -> Result<(), String> {
        let len = (3..=63).contains(&name.len());
        match self {
            Self::Container | Self::Queue => {
                let chars = name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
                let edges = !name.starts_with('-') && !name.ends_with('-') && !name.contains("--");
                if len && chars && edges {
                    Ok(())
                } else {
                    Err(
                        "a name is 3 to 63 lower-case letters, digits and single hyphens, \
                         starting and ending with a letter or digit"
                            .to_owned(),
                    )
                }
            }
            Self::Table => {
                let chars = name.bytes().all(|b| b.is_ascii_alphanumeric());
                let first = name.bytes().next().is_some_and(|b| b.is_ascii_alphabetic());
                if !(len && chars && first) {
                    Err(
                        "a table name is 3 to 63 letters and digits, starting with a letter"
                            .to_owned(),
                    )
                } else if name.eq_ignore_ascii_case("tables") {
                    Err("\"tables\" is reserved by the Table service".to_owned())
                } else {
                    Ok(())
                }
            }
        }
    }
}

/// What creating found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Created {
    New,
    AlreadyThere,
}

/// One storage account's services.
pub(crate) struct Account {
    pub name: String,
    endpoints: [String; 3],
    signer: Signer,
}

impl Account {
    pub(crate) fn new(name: String, endpoints: [String; 3], signer: Signer) -> Self {
        Self {
            name,
            endpoints,
            signer,
        }
    }

    /// A service's endpoint.
    pub(crate) fn endpoint(&self, kind: Kind) -> &str {
        &self.endpoints[kind as usize]
    }

    /// The resource's URL, which is also its id.
    pub(crate) fn url(&self, kind: Kind, name: &str) -> String {
        match kind {
            Kind::Table => format!("{}/Tables('{name}')", self.endpoint(kind)),
            _ => format!("{}/{name}", self.endpoint(kind)),
        }
    }

    fn send(&self, kind: Kind, request: Request) -> Result<Response, Error> {
        let date = httpdate::fmt_http_date(std::time::SystemTime::now());
        let mut request = request
            .header("x-ms-date", date)
            .header("x-ms-version", VERSION);
        if kind == Kind::Table {
            request = request
                .header("accept", TABLE_JSON)
                .header("dataserviceversion", "3.0")
                .header("maxdataserviceversion", "3.0;NetFx");
        }
        let request = self.signer.sign(request, kind == Kind::Table)?;
        Ok(request.send()?)
    }

    /// The URL of one page of a list: the first, or the one `marker` names.
    fn list_url(&self, kind: Kind, marker: Option<&str>) -> String {
        let endpoint = self.endpoint(kind);
        let marker = marker.map(|m| utf8_percent_encode(m, NON_ALPHANUMERIC));
        match (kind, marker) {
            (Kind::Table, None) => format!("{endpoint}/Tables"),
            (Kind::Table, Some(m)) => format!("{endpoint}/Tables?NextTableName={m}"),
            (_, None) => format!("{endpoint}/?comp=list"),
            (_, Some(m)) => format!("{endpoint}/?comp=list&marker={m}"),
        }
    }

    /// Every name the service holds, page after page. A service that names a page it already
    /// gave, or more than [`MAX_PAGES`], is refused rather than followed for ever.
    pub(crate) fn list(&self, kind: Kind) -> Result<Vec<String>, Error> {
        let mut names = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut marker: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let url = self.list_url(kind, marker.as_deref());
            let response = self.send(kind, Request::get(url))?;
            expect(kind, &response, &[200], "list")?;
            let (page, next) = match kind {
                Kind::Table => table_page(&response)?,
                _ => xml_page(kind, &response)?,
            };
            names.extend(page);
            match next {
                Some(next) if !next.is_empty() => {
                    if !seen.insert(next.clone()) {
                        return Err(Error::dependency(
                            "list_loops",
                            format!(
                                "the {} service named the same list page twice",
                                kind.service()
                            ),
                        ));
                    }
                    marker = Some(next);
                }
                _ => return Ok(names),
            }
        }
        Err(Error::dependency(
            "list_too_long",
            format!("the {} list went past {MAX_PAGES} pages", kind.service()),
        ))
    }

    /// Creates one; one that exists is left as it is.
    pub(crate) fn create(&self, kind: Kind, name: &str) -> Result<Created, Error> {
        let request = match kind {
            Kind::Container => Request::put(format!("{}?restype=container", self.url(kind, name))),
            Kind::Queue => Request::put(self.url(kind, name)),
            Kind::Table => Request::post(format!("{}/Tables", self.endpoint(kind)))
                .header("content-type", "application/json")
                .header("prefer", "return-no-content")
                .body(format!("{{\"TableName\":\"{name}\"}}")),
        };
        let response = self.send(kind, request)?;
        // A queue that exists answers 204 (409 QueueAlreadyExists when its metadata differs); a
        // container or table that exists, 409 …AlreadyExists.
        let exists = (response.status == 409
            && service_error(kind, &response)
                .0
                .is_some_and(|c| c.ends_with("AlreadyExists")))
            || (kind == Kind::Queue && response.status == 204);
        if exists {
            return Ok(Created::AlreadyThere);
        }
        expect(kind, &response, &[201, 204], &format!("create {name}")).map_err(|e| {
            if e.code().is_some_and(|c| c.ends_with("BeingDeleted")) {
                e.with_suggestion(format!(
                    "the {} {name} is still being deleted (the service takes about 30 seconds \
                     after a delete); try again shortly",
                    kind.noun()
                ))
            } else {
                e
            }
        })?;
        Ok(Created::New)
    }

    /// Deletes one; one already gone, or already being deleted, counts as deleted.
    pub(crate) fn delete(&self, kind: Kind, name: &str) -> Result<(), Error> {
        let url = match kind {
            Kind::Container => format!("{}?restype=container", self.url(kind, name)),
            _ => self.url(kind, name),
        };
        let response = self.send(kind, Request::delete(url))?;
        let being_deleted = response.status == 409
            && service_error(kind, &response)
                .0
                .is_some_and(|c| c.ends_with("BeingDeleted"));
        if response.status == 404 || being_deleted {
            return Ok(());
        }
        expect(kind, &response, &[200, 202, 204], &format!("delete {name}"))
    }
}

/// The service's error code and message: the code from the `x-ms-error-code` header, or else
/// from the body, as [`error_body`] reads it.
fn service_error(kind: Kind, response: &Response) -> (Option<String>, Option<String>) {
    let (body_code, message) = error_body(kind, response);
    let code = response
        .header("x-ms-error-code")
        .map(str::to_owned)
        .or(body_code);
    (code, message)
}

/// `(code, message)` from an error body: XML `<Error><Code/><Message/>` (Blob, Queue) or
/// JSON `{"odata.error": {"code", "message": {"value"}}}` (Table).
fn error_body(kind: Kind, response: &Response) -> (Option<String>, Option<String>) {
    let text = response.text();
    if kind == Kind::Table {
        let Ok(json) =
            azd_provider_sdk::serde_json::from_str::<azd_provider_sdk::serde_json::Value>(&text)
        else {
            return (None, None);
        };
        let error = &json["odata.error"];
        let code = error["code"].as_str().map(str::to_owned);
        // The first line, as for XML: the rest is the request's id and time.
        let message = error["message"]["value"]
            .as_str()
            .map(|m| m.lines().next().unwrap_or_default().trim().to_owned());
        return (code, message);
    }
    let Ok(doc) = roxmltree::Document::parse(&text) else {
        return (None, None);
    };
    let field = |tag: &str| {
        doc.descendants()
            .find(|n| n.has_tag_name(tag))
            .and_then(|n| n.text())
            .map(|t| t.lines().next().unwrap_or_default().trim().to_owned())
    };
    (field("Code"), field("Message"))
}

/// A status other than `ok` becomes the service's error, with its own code and message.
fn expect(kind: Kind, response: &Response, ok: &[u16], what: &str) -> Result<(), Error> {
    if ok.contains(&response.status) {
        return Ok(());
    }
    let (code, message) = service_error(kind, response);
    let code = code.unwrap_or_else(|| format!("HTTP{}", response.status));
    let message = message.unwrap_or_else(|| format!("HTTP status {}", response.status));
    let service = format!("Azure Storage ({} service)", kind.service());
    let error = Error::service(
        service,
        code.clone(),
        i32::from(response.status),
        format!("{} {what}: {code}: {message}", kind.noun()),
    );
    Err(match response.status {
        401 | 403 => error.with_suggestion(
            "the service refused the credentials: check the account key (auth: shared-key), \
             or that your identity holds a Storage data role on the account (auth: token)",
        ),
        _ => error,
    })
}

/// Names and the next marker of a Blob or Queue list (`<Name>` of each item, `<NextMarker>`).
fn xml_page(kind: Kind, response: &Response) -> Result<(Vec<String>, Option<String>), Error> {
    let text = response.text();
    let doc = roxmltree::Document::parse(&text).map_err(|e| {
        Error::dependency(
            "bad_list",
            format!("the {} list is not XML: {e}", kind.service()),
        )
    })?;
    let item = match kind {
        Kind::Container => "Container",
        _ => "Queue",
    };
    let names = doc
        .descendants()
        .filter(|n| n.has_tag_name("Name") && n.parent().is_some_and(|p| p.has_tag_name(item)))
        .filter_map(|n| n.text().map(str::to_owned))
        .collect();
    let next = doc
        .descendants()
        .find(|n| n.has_tag_name("NextMarker"))
        .and_then(|n| n.text().map(str::to_owned));
    Ok((names, next))
}

/// Names and the continuation of a Table list (`value[].TableName`).
fn table_page(response: &Response) -> Result<(Vec<String>, Option<String>), Error> {
    let json: azd_provider_sdk::serde_json::Value =
        azd_provider_sdk::serde_json::from_slice(&response.body).map_err(|e| {
            Error::dependency("bad_list", format!("the table list is not JSON: {e}"))
        })?;
    let names = json["value"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["TableName"].as_str().map(str::to_owned))
        .collect();
    let next = response
        .header("x-ms-continuation-nexttablename")
        .map(str::to_owned);
    Ok((names, next))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(status: u16, headers: &[(&str, &str)], body: &str) -> Response {
        Response {
            status,
            headers: headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn list_pages_carry_their_marker_encoded() {
        let account = Account::new(
            "a".into(),
            [
                "https://a.blob.core.windows.net".into(),
                "http://127.0.0.1:10001/devstoreaccount1".into(),
                "https://a.table.core.windows.net".into(),
            ],
            Signer::Token,
        );
        assert_eq!(
            account.list_url(Kind::Container, None),
            "https://a.blob.core.windows.net/?comp=list"
        );
        assert_eq!(
            account.list_url(Kind::Queue, Some("/a/q+1=")),
            "http://127.0.0.1:10001/devstoreaccount1/?comp=list&marker=%2Fa%2Fq%2B1%3D"
        );
        assert_eq!(
            account.list_url(Kind::Table, Some("1!x")),
            "https://a.table.core.windows.net/Tables?NextTableName=1%21x"
        );
    }

    #[test]
    fn lists_read_names_and_markers() {
        let xml = r#"<?xml version="1.0" encoding="utf-8"?><EnumerationResults ServiceEndpoint="x">
            <Containers><Container><Name>web</Name><Properties><Name>not-this</Name></Properties></Container>
            <Container><Name>uploads</Name></Container></Containers><NextMarker>m2</NextMarker></EnumerationResults>"#;
        let (names, next) = xml_page(Kind::Container, &response(200, &[], xml)).unwrap();
        assert_eq!(names, ["web", "uploads"]);
        assert_eq!(next.as_deref(), Some("m2"));
        let (names, next) = table_page(&response(
            200,
            &[("x-ms-continuation-nexttablename", "t9")],
            r#"{"value":[{"TableName":"audit"},{"TableName":"Log"}]}"#,
        ))
        .unwrap();
        assert_eq!(
            (names, next.as_deref()),
            (vec!["audit".to_owned(), "Log".to_owned()], Some("t9"))
        );
        assert!(xml_page(Kind::Queue, &response(200, &[], "not xml")).is_err());
    }

    #[test]
    fn a_service_error_carries_its_own_code_and_message() {
        let xml = "<?xml version=\"1.0\"?><Error><Code>AuthorizationFailure</Code>\
                   <Message>This request is not authorized.\nRequestId:1</Message></Error>";
        let e = expect(Kind::Queue, &response(403, &[], xml), &[200], "list").unwrap_err();
        assert_eq!(e.code(), Some("AuthorizationFailure"));
        assert_eq!(
            e.message(),
            "queue list: AuthorizationFailure: This request is not authorized."
        );
        assert!(e.suggestion().contains("account key"));
        let json = r#"{"odata.error":{"code":"TableBeingDeleted","message":{"lang":"en-US","value":"The table is being deleted."}}}"#;
        let e = expect(
            Kind::Table,
            &response(409, &[], json),
            &[201],
            "create audit",
        )
        .unwrap_err();
        assert_eq!(e.code(), Some("TableBeingDeleted"));
        assert!(e.message().contains("The table is being deleted."));
        let e = expect(
            Kind::Container,
            &response(503, &[("x-ms-error-code", "ServerBusy")], ""),
            &[200],
            "list",
        )
        .unwrap_err();
        assert_eq!(e.code(), Some("ServerBusy"));
        assert!(expect(Kind::Container, &response(201, &[], ""), &[201], "x").is_ok());
    }
}
