//! azd's services as a recording sees them: each call a provider makes
//! (environment values, questions) written down with azd's answer, so that a
//! replay can answer the same.

use std::sync::Arc;

use async_trait::async_trait;
use azd_wasm_host_core::{
    AzdServices, ConfirmQuestion, SelectQuestion, ServiceError, TextQuestion,
};
use serde_json::{Value, json};

use super::{REDACTED, Recorder};

/// azd's services, with every call and answer written to a recording.
pub struct Recorded<S> {
    inner: S,
    recorder: Arc<Recorder>,
}

impl<S> Recorded<S> {
    /// `inner`, recorded by `recorder`.
    pub fn new(inner: S, recorder: Arc<Recorder>) -> Self {
        Self { inner, recorder }
    }
}

/// Records `answer` of `call` and hands it back.
fn noted<T: Clone + Into<Value>>(
    recorder: &Recorder,
    call: &str,
    args: Value,
    answer: Result<T, ServiceError>,
) -> Result<T, ServiceError> {
    let shown = answer.clone().map(Into::into);
    recorder.service(call, args, &shown);
    answer
}

#[async_trait]
impl<S: AzdServices> AzdServices for Recorded<S> {
    async fn current_environment(&self) -> Result<String, ServiceError> {
        let answer = self.inner.current_environment().await;
        noted(&self.recorder, "current_environment", json!({}), answer)
    }

    async fn environment_values(&self, env: &str) -> Result<Vec<(String, String)>, ServiceError> {
        let answer = self.inner.environment_values(env).await;
        let shown = answer.clone().map(|kv| json!(kv));
        self.recorder
            .service("environment_values", json!({ "env": env }), &shown);
        answer
    }

    async fn environment_value(&self, env: &str, key: &str) -> Result<String, ServiceError> {
        let answer = self.inner.environment_value(env, key).await;
        let args = json!({ "env": env, "key": key });
        noted(&self.recorder, "environment_value", args, answer)
    }

    async fn set_environment_value(
        &self,
        env: &str,
        key: &str,
        value: &str,
    ) -> Result<(), ServiceError> {
        let answer = self.inner.set_environment_value(env, key, value).await;
        let shown = answer.clone().map(|()| Value::Null);
        let args = json!({ "env": env, "key": key, "value": value });
        self.recorder.service("set_environment_value", args, &shown);
        answer
    }

    async fn confirm(&self, q: ConfirmQuestion) -> Result<bool, ServiceError> {
        let args = json!({ "message": q.message, "default": q.default_value });
        let answer = self.inner.confirm(q).await;
        noted(&self.recorder, "confirm", args, answer)
    }

    async fn prompt(&self, q: TextQuestion) -> Result<String, ServiceError> {
        let args = json!({ "message": q.message, "secret": q.secret });
        let secret = q.secret;
        let answer = self.inner.prompt(q).await;
        if secret && let Ok(a) = &answer {
            self.recorder.keep_secret(a);
        }
        let shown = answer
            .clone()
            .map(|a| Value::from(if secret { REDACTED.to_owned() } else { a }));
        self.recorder.service("prompt", args, &shown);
        answer
    }

    async fn select(&self, q: SelectQuestion) -> Result<u32, ServiceError> {
        let args = json!({ "message": q.message, "choices": q.choices });
        let answer = self.inner.select(q).await;
        noted(&self.recorder, "select", args, answer)
    }
}
