//! Withings' token dialect (reference §2): the reply comes on HTTP 200 whatever happened, wrapped
//! in `{status, body}`. Translated here into RFC 6749 terms, so the generic flow reads it.
use crate::connection::TokenReply;
use serde_json::Value;

/// `{status: 0, body: {...}}` → the body; any other status → a refusal naming it. A reply without
/// `access_token`, `refresh_token` and `userid` is refused rather than saved.
pub fn reply(http_status: u16, body: &[u8]) -> TokenReply {
    let Ok(v) = serde_json::from_slice::<Value>(body) else {
        return Err(("not_json".into(), format!("Withings' token endpoint answered HTTP {http_status} with something that is not JSON")));
    };
    let status = v.get("status").and_then(Value::as_i64).unwrap_or(-1);
    let inner = v.get("body").cloned().unwrap_or_default();
    let complete = ["access_token", "refresh_token", "userid"].iter().all(|k| inner.get(k).is_some_and(|x| !x.is_null()));
    match (status, complete) {
        (0, true) => Ok(inner),
        (0, false) => Err(("incomplete_reply".into(), "Withings answered without an access token, refresh token and user id; nothing was saved".into())),
        (s, _) => Err((format!("withings_status_{s}"), v.get("error").and_then(Value::as_str).unwrap_or("no text").to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_envelope_is_taken_off_or_turned_into_a_refusal() {
        let ok = json!({"status": 0, "body": {"access_token": "a", "refresh_token": "r", "userid": 7, "expires_in": 10800}});
        assert_eq!(reply(200, ok.to_string().as_bytes()).unwrap()["userid"], 7);
        let refused = json!({"status": 503, "error": "Invalid params"});
        assert_eq!(reply(200, refused.to_string().as_bytes()).unwrap_err().0, "withings_status_503");
        let partial = json!({"status": 0, "body": {"access_token": "a"}});
        assert_eq!(reply(200, partial.to_string().as_bytes()).unwrap_err().0, "incomplete_reply");
        assert_eq!(reply(502, b"<html>").unwrap_err().0, "not_json");
    }
}
