//! Evaluation of the caller's scripts in the page's main world, and the conversion of their
//! results to JSON as `JSON.stringify` does (the contract's EVAL_BAD_ARG for what JSON cannot
//! hold, EVAL_THREW for a throw).

use serde_json::Value;

use super::Page;
use crate::cdp::runtime;
use crate::error::{Error, Result};
use crate::rt::lock;

impl Page {
    /// Evaluates a caller's script as the eval tool does: compiled as an expression
    /// (what `Runtime.evaluate` runs) or, when that is a syntax error, as a function body (`const
    /// a = 1; return a`); the value converted as `JSON.stringify` does.
    pub async fn evaluate_expression_or_body(&self, js: &str) -> Result<serde_json::Value> {
        let compiled = self
            .session
            .send(&runtime::CompileScriptParams::new(js, "", false))
            .await?;
        if compiled.exception_details.is_none() {
            self.evaluate(js).await
        } else {
            self.evaluate(&crate::js::function_body_expression(js))
                .await
        }
    }

    /// The document title.
    pub async fn title(&self) -> Result<String> {
        let value = self.evaluate(crate::js::DOCUMENT_TITLE).await?;
        let title = value.as_str().unwrap_or_default().to_string();
        lock(&self.shared.state).title.clone_from(&title);
        Ok(title)
    }

    /// Evaluates `expression` in the page's main world and returns its value converted as
    /// `JSON.stringify` does (`toJSON` honoured: a `Date` is its ISO string, `undefined` is
    /// null); promises are awaited.
    ///
    /// A throw is [`Error::EvalThrew`]; a function, symbol, bigint, DOM node, window or circular
    /// result is [`Error::EvalBadArg`].
    pub async fn evaluate(&self, expression: &str) -> Result<Value> {
        // By reference first: the remote object's type says whether JSON can hold the value
        // (a symbol or a node cannot be "returned by value" and would only give a vague error).
        let params = runtime::EvaluateParams::new(expression)
            .await_promise(true)
            .object_group(EVAL_GROUP);
        let answer = self.unless_dialog(self.session.send(&params)).await?;
        if let Some(details) = answer.exception_details {
            return Err(exception_error(&details));
        }
        let object = answer.result;
        let Some(object_id) = object
            .object_id
            .clone()
            .filter(|_| serialisable_object(&object))
        else {
            return remote_value(object);
        };
        // Converted as JSON.stringify does (docs/tools.md#browser_advanced_eval--evaluate-javascript), in the world the script ran in: returned by
        // value, the protocol would give `{}` for a Date and ignore every `toJSON`.
        let as_json = runtime::CallFunctionOnParams::new(crate::js::JSON_VALUE)
            .object_id(object_id.clone())
            .return_by_value(true);
        let res = match self.unless_dialog(self.session.send(&as_json)).await {
            Ok(answer) => match answer.exception_details {
                Some(details) => Err(exception_error(&details)),
                None => json_value(answer.result),
            },
            Err(other) => Err(other),
        };
        // Release only this call's object: a concurrent evaluate may still need its own.
        let release = self
            .session
            .send(&runtime::ReleaseObjectParams::new(object_id));
        crate::rt::spawn(async move {
            let _ = release.await;
        });
        res
    }
}

/// The object group of `evaluate`'s remote objects, released after each call.
const EVAL_GROUP: &str = "chromate-eval";

/// Whether a by-reference result is an object JSON can hold (then it is fetched by value).
fn serialisable_object(object: &runtime::RemoteObject) -> bool {
    use runtime::{RemoteObjectSubtype as Sub, RemoteObjectType as Ty};
    object.r#type == Ty::Object
        && !matches!(object.subtype, Some(Sub::Node) | Some(Sub::Null))
        && object.class_name.as_deref() != Some("Window")
}

/// The answer of [`crate::js::JSON_VALUE`]: the value its JSON text holds, or EVAL_BAD_ARG.
fn json_value(object: runtime::RemoteObject) -> Result<Value> {
    let answer = object.value.unwrap_or(Value::Null);
    if let Some(kind) = answer.get("unserialisable").and_then(Value::as_str) {
        return Err(Error::EvalBadArg {
            returned_type: kind.to_string(),
        });
    }
    let text = answer.get("json").and_then(Value::as_str).unwrap_or("null");
    serde_json::from_str(text).map_err(|source| Error::Decode {
        method: <runtime::CallFunctionOnParams as crate::cdp::Command>::METHOD.to_string(),
        source,
    })
}

/// A script result as JSON, or the contract's EVAL_BAD_ARG for what JSON cannot hold.
pub(super) fn remote_value(object: runtime::RemoteObject) -> Result<Value> {
    use runtime::{RemoteObjectSubtype as Sub, RemoteObjectType as Ty};
    let bad = |t: &str| {
        Err(Error::EvalBadArg {
            returned_type: t.to_string(),
        })
    };
    match (&object.r#type, &object.subtype) {
        (Ty::Undefined, _) => Ok(Value::Null),
        (Ty::Function, _) => bad("function"),
        (Ty::Symbol, _) => bad("symbol"),
        (Ty::Bigint, _) => bad("bigint"),
        (Ty::Object, Some(Sub::Node)) => bad("node"),
        (Ty::Object, _) if object.class_name.as_deref() == Some("Window") => bad("window"),
        // JSON.stringify writes -0 as 0, and NaN and the infinities as null.
        (Ty::Number, _)
            if object
                .unserializable_value
                .as_ref()
                .is_some_and(|v| v.0 == "-0") =>
        {
            Ok(Value::from(0))
        }
        (Ty::Number, _) if object.unserializable_value.is_some() => Ok(Value::Null),
        _ => Ok(object.value.unwrap_or(Value::Null)),
    }
}

/// The first line of a thrown exception, and where it was thrown.
pub(crate) fn exception_error(details: &runtime::ExceptionDetails) -> Error {
    let description = details
        .exception
        .as_ref()
        .and_then(|e| e.description.clone());
    let message = description
        .as_deref()
        .and_then(|d| d.lines().next())
        .map(str::to_string)
        .or_else(|| {
            details
                .exception
                .as_ref()
                .and_then(|e| e.value.as_ref())
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
        })
        .unwrap_or_else(|| details.text.clone());
    let origin = details.url.as_ref().map(|url| {
        format!(
            "{url}:{}:{}",
            details.line_number + 1,
            details.column_number + 1
        )
    });
    Error::EvalThrew { message, origin }
}
