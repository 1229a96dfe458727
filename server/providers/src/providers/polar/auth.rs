//! Polar's step after the login (reference §2.3): every data route answers 403 until the user is
//! registered with this app by `POST /v3/users`. Run once right after the exchange, and again
//! before the next read while it has not succeeded.
use crate::catalog::NonGet;
use crate::connection::{BoxFuture, Grant, StepError};

/// The one route of Polar's registration (reference polar §2.3), relative to its API base.
pub const REGISTRATION: &str = "/v3/users";

/// What Polar's catalog declares it sends besides GETs (`ProviderSpec.non_get`): the registration.
pub static NON_GET: &[NonGet] =
    &[NonGet::post(REGISTRATION, "Polar refuses every read until the user is registered with the app (reference §2.3); it writes none of the user's data")];

/// Where the data routes are (the twin, or a future host), as the provider reads it.
pub fn base_in(config: &crate::config::Config) -> String {
    config.url(BASE_ENV, super::DEFAULT_BASE)
}

const BASE_ENV: &str = "VITALS_POLAR_BASE_URL";

/// Register the user. 200/201: registered. 409: already registered (with this app, or the
/// member id is taken by an earlier registration of the same user): fine. 403: the user has not
/// accepted Polar's mandatory consents: said, with where to accept them.
pub fn register(g: Grant, config: std::sync::Arc<crate::config::Config>) -> BoxFuture<'static, Result<(), StepError>> {
    Box::pin(async move {
        let user = g.extra.get("x_user_id").cloned().unwrap_or_default();
        if user.is_empty() {
            return Err(StepError::Refused("Polar's token reply carried no x_user_id, so the account cannot be registered; connect again".into()));
        }
        // A member id of ours that is stable per Polar user: registering again gives 409, not a second user.
        let member = format!("vitals-{user}");
        let status =
            crate::http::register_polar_user(&format!("{}{REGISTRATION}", base_in(&config)), NON_GET, &g.access, &member).await.map_err(|e| match e {
                e @ (crate::http::HttpError::Timeout | crate::http::HttpError::Connect(_)) => StepError::Unavailable(e.to_string()),
                e => StepError::Failed(e.to_string()),
            })?;
        match status {
            200 | 201 | 409 => Ok(()),
            403 => Err(StepError::Refused(
                "Polar says the mandatory consents are not accepted yet. Open Polar Flow (flow.polar.com or the app), accept \
                        the consents it asks for, then ask again: vitals registers itself before the next read."
                    .into(),
            )),
            401 => Err(StepError::Refused("Polar refused the new token (HTTP 401); connect again".into())),
            204 => Err(StepError::Refused("Polar says the user was not found (HTTP 204); connect again".into())),
            s if s == 429 || s >= 500 => Err(StepError::Unavailable(format!("Polar answered HTTP {s}; it will be tried again before the next read"))),
            s => Err(StepError::Failed(format!("Polar answered HTTP {s}; it will be tried again before the next read"))),
        }
    })
}
