//! An error told whole: its message and every cause under it, on one line,
//! for the places that print a typed error (a log line, an answer's text).

use std::error::Error;

/// `error`'s message and each `source` beneath it, joined by `: ` (as
/// anyhow's `{:#}` prints a chain); a cause whose message its parent already
/// ends with is not said twice.
pub fn chain(error: &(dyn Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut next = error.source();
    while let Some(cause) = next {
        let said = cause.to_string();
        if !text.ends_with(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        next = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::chain;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot read {0}")]
    struct Read(&'static str, #[source] std::io::Error);

    #[derive(Debug, thiserror::Error)]
    #[error(transparent)]
    struct Same(#[from] std::io::Error);

    #[test]
    fn every_cause_is_told_once() {
        let io = || std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        assert_eq!(
            chain(&Read("a.key", io())),
            "cannot read a.key: no such file"
        );
        assert_eq!(chain(&io()), "no such file");
        // `transparent` says its source's message and has it as source: said once.
        assert_eq!(chain(&Same(io())), "no such file");
    }
}
