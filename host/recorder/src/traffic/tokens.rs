//! The token side of [`Traffic`]: recording which scopes were asked (the
//! token itself becomes a secret the recording never writes), and on replay
//! a stand-in token for each recorded scope, with no azd asked.

use std::sync::Arc;

use async_trait::async_trait;
use azd_wasm_host_core::{AccessToken, TokenError, TokenSource};

use super::control::{LogEvent, Traffic, TrafficMode};

/// What a replayed token reads (a recording redacts the real one).
pub const STAND_IN_TOKEN: &str = "replayed-token";

impl Traffic {
    /// Where tokens come from under this control: `inner`, watched when
    /// recording; stand-ins when replaying.
    pub fn tokens(
        self: &Arc<Self>,
        inner: Option<Arc<dyn TokenSource>>,
    ) -> Option<Arc<dyn TokenSource>> {
        match self.plan.mode {
            TrafficMode::Live => inner,
            TrafficMode::Record | TrafficMode::Replay => Some(Arc::new(Watched {
                traffic: Arc::clone(self),
                inner,
            })),
        }
    }
}

struct Watched {
    traffic: Arc<Traffic>,
    inner: Option<Arc<dyn TokenSource>>,
}

#[async_trait]
impl TokenSource for Watched {
    async fn token(&self, scope: &str) -> Result<AccessToken, TokenError> {
        let traffic = &self.traffic;
        if traffic.plan.mode == TrafficMode::Replay {
            if !traffic.plan.tokens.iter().any(|s| s == scope) {
                traffic.log(&LogEvent::TokenMissed {
                    scope: scope.to_owned(),
                });
                return Err(TokenError::new(
                    "not-recorded",
                    format!("replay: the recording asked for no token for {scope}"),
                ));
            }
            traffic.log(&LogEvent::Token {
                scope: scope.to_owned(),
            });
            return Ok(AccessToken {
                token: STAND_IN_TOKEN.to_owned(),
                expires_on: azd_wasm_host_core::clock::unix_secs() + 3600,
            });
        }
        let Some(inner) = &self.inner else {
            return Err(TokenError::new(
                "azd-unavailable",
                "no token source while recording",
            ));
        };
        let token = inner.token(scope).await?;
        traffic.keep_secret(&token.token);
        traffic.log(&LogEvent::Token {
            scope: scope.to_owned(),
        });
        Ok(token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::{TrafficPlan, read_log};

    struct Fixed;

    #[async_trait]
    impl TokenSource for Fixed {
        async fn token(&self, _scope: &str) -> Result<AccessToken, TokenError> {
            Ok(AccessToken {
                token: "eyJ0eXAiOiJKV1Qi.real".into(),
                expires_on: 1,
            })
        }
    }

    fn traffic(mode: TrafficMode, tokens: &[&str], dir: &std::path::Path) -> Arc<Traffic> {
        Traffic::new(TrafficPlan {
            mode,
            log: dir.join("log.jsonl"),
            exchanges: vec![],
            tokens: tokens.iter().map(|s| (*s).to_owned()).collect(),
            faults: vec![],
            safe: vec![],
        })
        .unwrap()
    }

    #[tokio::test]
    async fn recording_notes_the_scope_and_keeps_the_token_secret() {
        let dir = tempfile::tempdir().unwrap();
        let t = traffic(TrafficMode::Record, &[], dir.path());
        let source = t.tokens(Some(Arc::new(Fixed))).unwrap();
        assert_eq!(
            source.token("s/.default").await.unwrap().token,
            "eyJ0eXAiOiJKV1Qi.real"
        );
        assert_eq!(
            t.secrets.lock().scrub("Bearer eyJ0eXAiOiJKV1Qi.real"),
            "Bearer REDACTED"
        );
        let log = read_log(&dir.path().join("log.jsonl")).unwrap();
        assert_eq!(
            log,
            vec![LogEvent::Token {
                scope: "s/.default".into()
            }]
        );
    }

    #[tokio::test]
    async fn replay_gives_stand_ins_for_recorded_scopes_only() {
        let dir = tempfile::tempdir().unwrap();
        let t = traffic(TrafficMode::Replay, &["s/.default"], dir.path());
        let source = t.tokens(None).unwrap();
        assert_eq!(
            source.token("s/.default").await.unwrap().token,
            STAND_IN_TOKEN
        );
        let e = source.token("other/.default").await.unwrap_err();
        assert_eq!(e.code, "not-recorded");
        let log = read_log(&dir.path().join("log.jsonl")).unwrap();
        assert!(matches!(&log[1], LogEvent::TokenMissed { scope } if scope == "other/.default"));
        let live = traffic(TrafficMode::Live, &[], dir.path());
        assert!(live.tokens(None).is_none());
    }
}
