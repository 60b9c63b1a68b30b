//! `svc login`, `svc logout`, `svc whoami`, `svc register`: the user session, saved in a file
//! token store (see [`connect::session_path`]).

use svc_api::Error;
use svc_api::auth::{FileTokenStore, SVC_AUTH_KEY, SessionError, TokenStore, TokenStoreError};
use svc_api::model::account::RegisterRequest;

use crate::args::{Global, LoginArgs, RegisterArgs};
use crate::connect::{self, Access};
use crate::exit::Failure;
use crate::{input, output, signals};

pub async fn login(global: &Global, args: LoginArgs) -> Result<(), Failure> {
    let path = connect::require_session_path()?;
    let client = connect::client(global, Access::Account)?;
    let input::Given { password, mut stop } = input::password(
        &args.password,
        &format!("password for {}: ", output::for_terminal(&args.email)),
        false,
    )?;
    let account = client.account();
    let login = account.login(args.email.as_str(), password);
    let signed = signals::unless_stopped(stop.as_mut(), async {
        login.await.map_err(|e| match e.body() {
            Some(body) if e.status().is_some_and(|s| s.as_u16() == 401) => Failure::Refused(
                format!(
                    "sign-in refused (401): {}",
                    body.summary().trim_end_matches('.')
                ),
            )
            .with_hint(
                "check the email and the password (--password-stdin or SVC_PASSWORD), and that the account exists in this project and environment (`svc register` creates one)",
            ),
            _ => Failure::from(e),
        })
    })
    .await?;
    let who = signed
        .user
        .email
        .as_deref()
        .or(signed.user.username.as_deref())
        .unwrap_or(signed.user.uid.as_str());
    eprintln!(
        "signed in as {}; session saved in {}",
        output::for_terminal(who),
        path.display()
    );
    output::value(output::resolve(global.output), &signed.user)
}

pub async fn logout() -> Result<(), Failure> {
    let path = connect::require_session_path()?;
    let store = FileTokenStore::new(&path);
    let was_signed_in = match store.get(SVC_AUTH_KEY) {
        Ok(entry) => {
            let present = entry.is_some();
            store.remove(SVC_AUTH_KEY).map_err(Failure::session_store)?;
            present
        }
        // A file that is not a store of ours any more: it only ever held the session.
        Err(TokenStoreError::Corrupt { .. }) => {
            std::fs::remove_file(&path).map_err(|e| {
                Failure::Other(format!(
                    "cannot remove the unreadable session file {}: {e}",
                    path.display()
                ))
            })?;
            eprintln!("removed the unreadable session file {}", path.display());
            return Ok(());
        }
        Err(e) => return Err(Failure::session_store(e)),
    };
    if was_signed_in {
        eprintln!(
            "signed out: removed the session from {} (the tokens are not revoked on the server)",
            path.display()
        );
    } else {
        eprintln!("not signed in; nothing to do");
    }
    Ok(())
}

pub async fn whoami(global: &Global) -> Result<(), Failure> {
    let path = connect::require_session_path()?;
    let client = connect::client(global, Access::Account)?;
    let login_hint = "sign in with `svc login --email EMAIL --password-stdin`";
    let status = match client.account().is_authenticated().await {
        Ok(status) => status,
        Err(Error::Auth(SessionError::RefreshRejected(_))) => {
            return Err(Failure::NotSignedIn(
                "not signed in: the saved session has expired (it was removed)".into(),
            )
            .with_hint(login_hint));
        }
        Err(e) if e.status().is_some_and(|s| s.as_u16() == 401) => {
            return Err(Failure::NotSignedIn(format!(
                "not signed in: the server no longer accepts the session saved in {}",
                path.display()
            ))
            .with_hint(format!("{login_hint} (`svc logout` removes the old one)")));
        }
        Err(e) => return Err(e.into()),
    };
    match status.user {
        Some(user) if status.authenticated => output::value(output::resolve(global.output), &user),
        _ => Err(
            Failure::NotSignedIn(format!("not signed in (no session in {})", path.display()))
                .with_hint(login_hint),
        ),
    }
}

pub async fn register(global: &Global, args: RegisterArgs) -> Result<(), Failure> {
    let client = connect::client(global, Access::Account)?;
    let input::Given { password, mut stop } = input::password(
        &args.password,
        &format!("new password for {}: ", output::for_terminal(&args.email)),
        true,
    )?;
    let mut request = RegisterRequest::new(args.email.as_str(), password);
    if let Some(name) = args.first_name {
        request = request.first_name(name);
    }
    if let Some(name) = args.last_name {
        request = request.last_name(name);
    }
    let answer = signals::unless_stopped(stop.as_mut(), async {
        Ok(client.account().register(&request).await?)
    })
    .await?;
    if !answer.result {
        let why = answer
            .errors
            .map(|e| e.to_string())
            .unwrap_or_else(|| "no reason given".into());
        return Err(
            Failure::Refused(format!("the server refused the registration: {why}"))
                .with_hint("fix the fields named above (an email address can be registered once)"),
        );
    }
    eprintln!(
        "registered {}; sign in with `svc login --email {}`",
        args.email, args.email
    );
    match answer.user {
        Some(user) => output::value(output::resolve(global.output), &user),
        None => Ok(()),
    }
}
