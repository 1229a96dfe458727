//! Faults that follow a provider's pagination: a token handed back again, an empty page with a
//! token that leads to the real one. Only Oura (`next_token` in the query and the body),
//! Withings (`offset` in the form, `more`/`offset` in the body) and WHOOP (`nextToken` in the
//! query, `next_token` in the body, absent on the last page) page with tokens; Polar's and
//! Garmin's reads are one request per range, so these faults do not apply to them.
use axum::body::Body;
use axum::extract::Request;
use serde_json::{json, Value};

/// How one provider hands out its next page.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pager {
    /// `?next_token=` on the request, `next_token` in the answer.
    Oura,
    /// `offset=` in the form, `body.more` and `body.offset` in the answer.
    Withings,
    /// `?nextToken=` on the request, `next_token` in the answer (left out on the last page).
    Whoop,
    /// `?pageToken=` on the request, `nextPageToken` in the answer (left out on the last page).
    Google,
}

/// What a paged request asked for.
pub struct Asked {
    /// The listing this page belongs to: the request without its token.
    pub chain: String,
    /// The token it carried (none: a first page).
    pub token: Option<String>,
    /// It carried the token of an empty page the wire made up, now taken off: the real first page.
    pub after_empty: bool,
}

/// The token of the empty page: leads to the real first page. Withings' offsets are numbers.
const EMPTY_OURA: &str = "wire-empty-page";
const EMPTY_WITHINGS: &str = "900000001";

impl Pager {
    pub fn of(path: &str) -> Option<Pager> {
        if path.starts_with("/v2/usercollection/") || path.starts_with("/v2/sandbox/usercollection/") {
            Some(Pager::Oura)
        } else if ["/measure", "/v2/measure", "/v2/sleep", "/v2/heart"].contains(&path) {
            Some(Pager::Withings)
        } else if ["cycle", "recovery", "activity/sleep", "activity/workout"]
            .iter()
            .any(|r| path.ends_with(&format!("{}/developer/v2/{r}", crate::whoop::PREFIX)))
        {
            Some(Pager::Whoop)
        } else if path.starts_with(&format!("{}/v4/users/", crate::google_health::PREFIX)) && path.contains("/dataTypes/") {
            Some(Pager::Google)
        } else {
            None
        }
    }

    fn param(self) -> &'static str {
        match self {
            Pager::Oura => "next_token",
            Pager::Withings => "offset",
            Pager::Whoop => "nextToken",
            Pager::Google => "pageToken",
        }
    }

    fn empty_token(self) -> &'static str {
        match self {
            Pager::Oura | Pager::Whoop | Pager::Google => EMPTY_OURA,
            Pager::Withings => EMPTY_WITHINGS,
        }
    }

    /// Read what `req` asks for and take off a made-up token, so the provider sees its first page.
    pub async fn read(self, req: Request) -> (Request, Asked) {
        let (mut parts, body) = req.into_parts();
        let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap_or_default();
        let in_query = self != Pager::Withings;
        let raw = if in_query { parts.uri.query().unwrap_or_default().to_string() } else { String::from_utf8_lossy(&bytes).into_owned() };
        let mut pairs: Vec<(String, String)> = url::form_urlencoded::parse(raw.as_bytes()).into_owned().collect();
        let token = pairs.iter().find(|(k, _)| k == self.param()).map(|(_, v)| v.clone());
        let after_empty = token.as_deref() == Some(self.empty_token());
        let mut rest: Vec<String> = pairs.iter().filter(|(k, _)| k != self.param()).map(|(k, v)| format!("{k}={v}")).collect();
        rest.sort();
        let chain = format!("{}?{}", parts.uri.path(), rest.join("&"));
        let mut bytes = bytes.to_vec();
        if after_empty {
            pairs.retain(|(k, _)| k != self.param());
            let encoded = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(&pairs).finish();
            if in_query {
                parts.uri = format!("{}?{encoded}", parts.uri.path()).parse().expect("a path and query parse back");
            } else {
                bytes = encoded.into_bytes();
                parts.headers.remove("content-length");
            }
        }
        let asked = Asked { chain, token: if after_empty { None } else { token }, after_empty };
        (Request::from_parts(parts, Body::from(bytes)), asked)
    }

    /// Set the answer's next-page token (`None`: the last page).
    pub fn set_next(self, answer: &mut Value, token: Option<&str>) {
        match self {
            Pager::Oura => answer["next_token"] = token.map_or(Value::Null, |t| json!(t)),
            Pager::Google => match (token, answer.as_object_mut()) {
                (Some(t), _) => answer["nextPageToken"] = json!(t),
                (None, Some(o)) => {
                    o.remove("nextPageToken");
                }
                (None, None) => {}
            },
            Pager::Whoop => match (token, answer.as_object_mut()) {
                (Some(t), _) => answer["next_token"] = json!(t),
                (None, Some(o)) => {
                    o.remove("next_token");
                }
                (None, None) => {}
            },
            Pager::Withings => {
                let n: i64 = token.and_then(|t| t.parse().ok()).unwrap_or(0);
                answer["body"]["more"] = json!(i32::from(token.is_some()));
                answer["body"]["offset"] = json!(n);
            }
        }
    }

    /// This answer with no records and a token that leads to the real first page.
    pub fn empty_page(self, answer: &mut Value) {
        super::records(answer).map(Vec::clear);
        self.set_next(answer, Some(self.empty_token()));
    }
}
