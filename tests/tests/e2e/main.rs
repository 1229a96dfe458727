//! The end-to-end suites, one binary: each module used to be a test binary of its own, and each
//! linked the whole stack again (DECISIONS 45). The shared harness is `common`.
mod common;

mod analysis;
mod apps;
mod apps_browser;
mod arguments;
mod complete_or_said;
mod conformance;
mod connect;
mod coverage_props;
mod credentials;
mod decoders;
mod docs;
mod economy;
mod formats;
mod front_door;
mod garmin;
mod garmin_connect;
mod http;
mod invariants;
mod load;
mod matrix;
mod mcpb;
mod oauth;
mod oura;
mod people;
mod people_browser;
mod polar;
mod python;
mod speed_size;
mod stdio;
mod store_race;
mod terminal_login;
mod twin;
mod withings;
mod withings_login;
