//! The HTTP client refuses every request other than a GET that a provider's catalog does not
//! declare: each kind of POST, held to the real catalogs' declarations (the client itself lives in
//! the core crate, which knows no provider).
use crate::http::*;
use crate::secret::Secret;

#[tokio::test]
async fn a_form_post_that_is_not_a_read_is_refused_before_it_is_sent() {
    // Port 9 on loopback answers nothing: had the request been sent, the error would be a connection failure.
    let req = Request {
        method: ReadMethod::FormPost,
        url: "http://127.0.0.1:9/v2/measure".into(),
        params: vec![("action".into(), "deletemeas".into())],
        headers: &[],
    };
    let withings = Http::declaring(crate::providers::withings::catalog::WITHINGS.non_get, &Default::default());
    let e = withings.read(&req, &Secret::new("x")).await.err().expect("refused");
    assert!(matches!(&e, HttpError::NotARead(a) if a == "deletemeas"), "{e}");
    let unnamed = Request { params: vec![], ..req.clone() };
    assert!(matches!(withings.read(&unnamed, &Secret::new("x")).await, Err(HttpError::NotARead(_))));
    // A read action, but from a client whose provider declares no POST, or to a route no catalog declares.
    let read = Request { params: vec![("action".into(), "getmeas".into())], ..req };
    assert!(matches!(Http::new().read(&read, &Secret::new("x")).await, Err(HttpError::Undeclared("POST", p)) if p == "/v2/measure"));
    let elsewhere = Request { url: "http://127.0.0.1:9/v2/notify".into(), ..read };
    assert!(matches!(withings.read(&elsewhere, &Secret::new("x")).await, Err(HttpError::Undeclared(..))));
}

#[tokio::test]
async fn every_other_post_goes_only_to_a_route_its_catalog_declares() {
    use crate::providers::{garmin, garmin_connect, polar};
    let (key, token) = (Secret::new("k"), Secret::new("t"));
    // Each to an undeclared route: refused before a connection is tried (port 9 answers nothing).
    let polar = polar::auth::NON_GET;
    assert!(matches!(register_polar_user("http://127.0.0.1:9/v3/users/12/delete", polar, &token, "m").await, Err(HttpError::Undeclared(..))));
    assert!(matches!(register_polar_user("http://127.0.0.1:9/v3/users", polar, &token, "m").await, Err(HttpError::Connect(_))));
    let garmin = garmin::auth::NON_GET;
    assert!(matches!(exchange_garmin_key("http://127.0.0.1:9/wellness-api/rest/x", garmin, &key).await, Err(HttpError::Undeclared(..))));
    let gc = garmin_connect::config::NON_GET;
    let sso = SsoSession::new("ua");
    assert!(matches!(
        sso.garmin_sso_post("http://127.0.0.1:9", "/mobile/api/logout", gc, &[], "r", &serde_json::json!({})).await,
        Err(HttpError::Undeclared(..))
    ));
    assert!(matches!(garmin_di_token("http://127.0.0.1:9/oauth/other", gc, "c", &[]).await, Err(HttpError::Undeclared(..))));
    assert!(matches!(garmin_oauth1_exchange("http://127.0.0.1:9/userprofile-service/x", gc, "a", "ua", &[]).await, Err(HttpError::Undeclared(..))));
    assert!(matches!(
        revoke("http://127.0.0.1:9/oauth/other", "https://api.ouraring.com/oauth/revoke", "access_token", &token).await,
        Err(HttpError::Undeclared(..))
    ));
    // A POST of a provider declaring none is refused whatever its route.
    assert!(matches!(register_polar_user("http://127.0.0.1:9/v3/users", &[], &token, "m").await, Err(HttpError::Undeclared(..))));
}
