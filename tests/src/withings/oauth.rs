//! Withings' OAuth as the reference describes it (§2): the authorize redirect; `requesttoken` for
//! both grants inside the `{status, body}` envelope; codes valid 30 seconds, usable once, bound to
//! the client and the redirect; access tokens of 40 hex characters living `expires_in` (3 h);
//! refresh tokens that rotate on every use, the previous one staying valid until 8 h after the new
//! pair was issued or until the new access token is first used. Time comes from the twin's clock.
use jiff::{Timestamp, ToSpan};
use serde_json::{json, Value};
use std::collections::HashMap;

#[derive(Clone, Debug)]
pub struct App {
    pub client_id: String,
    pub client_secret: String,
    /// Registered callback URLs (Withings allows several).
    pub redirect_uris: Vec<String>,
}

struct Code {
    client_id: String,
    redirect_uri: String,
    scope: String,
    issued: Timestamp,
}

#[derive(Clone)]
pub struct Access {
    pub client_id: String,
    pub scope: String,
    pub expires: Timestamp,
    /// The refresh token this access token was issued with (first use retires its predecessor).
    refresh: String,
}

struct Refresh {
    client_id: String,
    scope: String,
    /// Set once a newer pair was issued from it: valid until then, or until the new access is used.
    retired_at: Option<Timestamp>,
    successor_access: Option<String>,
}

pub struct OAuth {
    pub apps: Vec<App>,
    pub expires_in: i64,
    /// The user refuses consent.
    pub deny: bool,
    /// `userid` as a string (published examples) or an integer (the spec).
    pub userid_as_string: bool,
    /// The status for a dead refresh token or a bad code (undocumented; 503 "Invalid Params" seen).
    pub invalid_status: i64,
    codes: HashMap<String, Code>,
    access: HashMap<String, Access>,
    refresh: HashMap<String, Refresh>,
    counter: u64,
    /// Every token request: (grant type, status).
    pub log: Vec<(String, i64)>,
}

impl Default for OAuth {
    fn default() -> Self {
        OAuth {
            apps: vec![App {
                client_id: "withings-twin-client".into(),
                client_secret: "withings-twin-secret".into(),
                redirect_uris: vec!["http://localhost:8765/callback".into()],
            }],
            expires_in: 10_800,
            deny: false,
            userid_as_string: true,
            invalid_status: 503,
            codes: HashMap::new(),
            access: HashMap::new(),
            refresh: HashMap::new(),
            counter: 0,
            log: vec![],
        }
    }
}

fn hex40(seed: u64) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::digest(seed.to_le_bytes());
    d.iter().take(20).map(|b| format!("{b:02x}")).collect()
}

fn fail(status: i64, text: &str) -> Value {
    json!({"status": status, "body": {}, "error": text})
}

impl OAuth {
    fn next(&mut self) -> String {
        self.counter += 1;
        hex40(self.counter ^ 0x5717_4175)
    }

    /// A pair issued straight to the first app (a test that starts already connected).
    pub fn grant(&mut self, scope: &str, now: Timestamp) -> (String, String) {
        let client = self.apps[0].client_id.clone();
        let v = self.issue(&client, scope, now);
        (v["body"]["access_token"].as_str().unwrap().into(), v["body"]["refresh_token"].as_str().unwrap().into())
    }

    /// The grant behind a bearer, if it is an unexpired access token. Its first use retires the
    /// refresh token it replaced.
    pub fn use_access(&mut self, bearer: &str, now: Timestamp) -> Option<Access> {
        let a = self.access.get(bearer).filter(|a| a.expires > now)?.clone();
        for r in self.refresh.values_mut() {
            if r.successor_access.as_deref() == Some(bearer) {
                r.retired_at = Some(now);
            }
        }
        Some(a)
    }

    pub fn expire_access_tokens(&mut self) {
        for a in self.access.values_mut() {
            a.expires = Timestamp::UNIX_EPOCH;
        }
    }

    /// `GET /oauth2_user/authorize2`: consent at once, or `error=access_denied` with `deny`.
    pub fn authorize(&mut self, q: &HashMap<String, String>, now: Timestamp) -> Result<String, String> {
        let get = |k: &str| q.get(k).cloned().unwrap_or_default();
        let app = self.apps.iter().find(|a| a.client_id == get("client_id")).cloned().ok_or("unknown client_id")?;
        let redirect = get("redirect_uri");
        if !app.redirect_uris.contains(&redirect) {
            return Err("redirect_uri is not registered for this app".into());
        }
        if get("response_type") != "code" || get("state").is_empty() {
            return Err("response_type=code and state are required".into());
        }
        let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        if self.deny {
            return Ok(format!("{redirect}?error=access_denied&state={}", enc(&get("state"))));
        }
        let code = self.next();
        self.codes.insert(code.clone(), Code { client_id: app.client_id, redirect_uri: redirect.clone(), scope: get("scope"), issued: now });
        Ok(format!("{redirect}?code={code}&state={}", enc(&get("state"))))
    }

    /// `POST /v2/oauth2 action=requesttoken`.
    pub fn requesttoken(&mut self, form: &HashMap<String, String>, now: Timestamp) -> Value {
        let grant = form.get("grant_type").cloned().unwrap_or_default();
        let v = self.requesttoken_inner(&grant, form, now);
        self.log.push((grant, v["status"].as_i64().unwrap_or(-1)));
        v
    }

    fn requesttoken_inner(&mut self, grant: &str, form: &HashMap<String, String>, now: Timestamp) -> Value {
        let get = |k: &str| form.get(k).cloned().unwrap_or_default();
        let invalid = self.invalid_status;
        let Some(app) = self.apps.iter().find(|a| a.client_id == get("client_id") && a.client_secret == get("client_secret")).cloned() else {
            self.codes.remove(&get("code"));
            return fail(invalid, "Invalid Params: invalid client_id or client_secret");
        };
        match grant {
            "authorization_code" => {
                // Any attempt uses the code up.
                let Some(code) = self.codes.remove(&get("code")) else {
                    return fail(invalid, "Invalid Params: invalid code");
                };
                if code.client_id != app.client_id || now > code.issued + 30.seconds() {
                    return fail(invalid, "Invalid Params: invalid or expired code");
                }
                if get("redirect_uri") != code.redirect_uri {
                    return fail(invalid, "Invalid Params: redirect_uri mismatch");
                }
                self.issue(&app.client_id, &code.scope, now)
            }
            "refresh_token" => {
                let r = get("refresh_token");
                let alive = match self.refresh.get(&r) {
                    Some(g) if g.client_id == app.client_id => match g.retired_at {
                        None => true,
                        Some(at) => now < at,
                    },
                    _ => false,
                };
                if !alive {
                    return fail(invalid, "Invalid Params: invalid refresh_token");
                }
                let scope = self.refresh[&r].scope.clone();
                let v = self.issue(&app.client_id, &scope, now);
                let new_access = v["body"]["access_token"].as_str().unwrap_or_default().to_string();
                let old = self.refresh.get_mut(&r).expect("checked above");
                // The old one lives on until 8 h pass or the new access token is used, whichever is first.
                old.retired_at = Some(old.retired_at.unwrap_or(now + 8.hours()).min(now + 8.hours()));
                old.successor_access = Some(new_access);
                v
            }
            _ => fail(invalid, "Invalid Params: grant_type"),
        }
    }

    fn issue(&mut self, client_id: &str, scope: &str, now: Timestamp) -> Value {
        let (access, refresh) = (self.next(), self.next());
        self.access.insert(
            access.clone(),
            Access { client_id: client_id.into(), scope: scope.into(), expires: now + self.expires_in.seconds(), refresh: refresh.clone() },
        );
        self.refresh.insert(refresh.clone(), Refresh { client_id: client_id.into(), scope: scope.into(), retired_at: None, successor_access: None });
        let userid = if self.userid_as_string { json!("12345678") } else { json!(12345678) };
        json!({"status": 0, "body": {"userid": userid, "access_token": access, "refresh_token": refresh, "expires_in": self.expires_in,
               "scope": scope, "csrf_token": "PACnnxwHTaBQOzF7bQqwFUUotIuvtzSM", "token_type": "Bearer"}})
    }

    /// The refresh token an access token was issued with (tests follow a rotation with it).
    pub fn refresh_of(&self, access: &str) -> Option<String> {
        self.access.get(access).map(|a| a.refresh.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn the_old_refresh_token_dies_at_first_use_of_the_new_access_token_or_after_8_hours() {
        let t0 = Timestamp::UNIX_EPOCH + 1_000_000.seconds();
        let ask = |o: &mut OAuth, r: &str, at| {
            let f = form(&[
                ("grant_type", "refresh_token"),
                ("client_id", "withings-twin-client"),
                ("client_secret", "withings-twin-secret"),
                ("refresh_token", r),
            ]);
            o.requesttoken(&f, at)
        };
        // First use of the new access token retires the old refresh token.
        let mut o = OAuth::default();
        let (_, r1) = o.grant("user.metrics", t0);
        let v = ask(&mut o, &r1, t0);
        assert_eq!(v["status"], 0);
        let a2 = v["body"]["access_token"].as_str().unwrap().to_string();
        assert_eq!(a2.len(), 40);
        assert!(o.use_access(&a2, t0 + 1.minute()).is_some());
        assert_eq!(ask(&mut o, &r1, t0 + 2.minutes())["status"], 503);
        // Unused, the new pair leaves the old refresh token alive for 8 hours, not longer.
        let mut o = OAuth::default();
        let (_, r1) = o.grant("user.metrics", t0);
        assert_eq!(ask(&mut o, &r1, t0)["status"], 0);
        let mut o2 = OAuth::default();
        let (_, q1) = o2.grant("user.metrics", t0);
        assert_eq!(ask(&mut o2, &q1, t0)["status"], 0);
        assert_eq!(ask(&mut o, &r1, t0 + 7.hours())["status"], 0, "still valid 7 h later");
        assert_eq!(ask(&mut o2, &q1, t0 + 9.hours())["status"], 503, "dead 9 h later");
    }

    #[test]
    fn codes_last_thirty_seconds_and_work_once() {
        let mut o = OAuth::default();
        let t0 = Timestamp::UNIX_EPOCH + 1_000_000.seconds();
        let q = form(&[
            ("client_id", "withings-twin-client"),
            ("redirect_uri", "http://localhost:8765/callback"),
            ("response_type", "code"),
            ("state", "s"),
            ("scope", "user.metrics"),
        ]);
        let code_of = |to: String| to.split("code=").nth(1).unwrap().split('&').next().unwrap().to_string();
        let exchange = |o: &mut OAuth, c: &str, at| {
            o.requesttoken(
                &form(&[
                    ("grant_type", "authorization_code"),
                    ("client_id", "withings-twin-client"),
                    ("client_secret", "withings-twin-secret"),
                    ("code", c),
                    ("redirect_uri", "http://localhost:8765/callback"),
                ]),
                at,
            )["status"]
                .as_i64()
                .unwrap()
        };
        let c = code_of(o.authorize(&q, t0).unwrap());
        assert_eq!(exchange(&mut o, &c, t0 + 31.seconds()), 503, "expired after 30 s");
        let c = code_of(o.authorize(&q, t0).unwrap());
        assert_eq!(exchange(&mut o, &c, t0 + 5.seconds()), 0);
        assert_eq!(exchange(&mut o, &c, t0 + 6.seconds()), 503, "used once");
    }
}
