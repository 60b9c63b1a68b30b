//! Writes over HTTP: `PUT` is routed like `PATCH`, and a body is read by its content type as the
//! data engine reads it (the demo project, on SQLite).

use serde_json::{Value as Json, json};

/// One HTTP/1.1 exchange with the emulator: the status and the body.
async fn call(
    emu: &svc_emulator::Emulator,
    method: &str,
    path: &str,
    content_type: Option<&str>,
    payload: &str,
) -> (u16, Json) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(emu.local_addr())
        .await
        .unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {}\r\n\
         Connection: close\r\nContent-Length: {}\r\n",
        emu.api_key(),
        payload.len()
    );
    if let Some(ct) = content_type {
        request.push_str(&format!("Content-Type: {ct}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(payload);
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    let text = String::from_utf8_lossy(&raw);
    let status = text[9..12].parse().unwrap();
    let (head, rest) = text.split_once("\r\n\r\n").unwrap();
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        // One chunk: its size line, the data, then the last chunk.
        rest.split_once("\r\n")
            .map_or("", |(_, d)| d)
            .rsplit_once("\r\n0\r\n")
            .map_or("", |(d, _)| d)
            .to_owned()
    } else {
        rest.to_owned()
    };
    (status, serde_json::from_str(&body).unwrap_or(Json::Null))
}

/// `PUT` is routed like `PATCH`; bodies are read by content type as the engine reads them.
#[tokio::test]
async fn put_and_body_content_types_over_http() {
    let emu = svc_emulator::Emulator::start(svc_emulator::EmulatorConfig::default())
        .await
        .unwrap();
    let product = "/projects/demo/prod/shop/models/products/1";
    let json = Some("application/json");
    let (s, before) = call(&emu, "GET", product, None, "").await;
    assert_eq!(s, 200);
    let (s, v) = call(&emu, "PUT", product, json, r#"{"name": "Renamed"}"#).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["name"], "Renamed");
    assert_eq!(v["price"], before["price"], "PUT is partial");
    // An empty JSON body is `{}`.
    let (s, v) = call(&emu, "PATCH", product, json, "").await;
    assert_eq!((s, &v["name"]), (200, &json!("Renamed")));
    // Without a JSON content type the engine sees no fields.
    let (s, v) = call(&emu, "PATCH", product, None, r#"{"name": "Ignored"}"#).await;
    assert_eq!((s, &v["name"]), (200, &json!("Renamed")));
    let (s, v) = call(
        &emu,
        "PATCH",
        product,
        Some("text/plain"),
        r#"{"name": "Ignored"}"#,
    )
    .await;
    assert_eq!((s, &v["name"]), (200, &json!("Renamed")));
    // A form.
    let form = Some("application/x-www-form-urlencoded");
    let (s, v) = call(
        &emu,
        "PATCH",
        product,
        form,
        "name=From+a+form&category=a&category=b",
    )
    .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        (&v["name"], &v["category"]),
        (&json!("From a form"), &json!("a,b"))
    );
    // Python's JSON: NaN is a float.
    let (s, v) = call(&emu, "PATCH", product, json, r#"{"price": NaN}"#).await;
    assert_eq!(s, 400, "price is NOT NULL and NaN is stored as NULL: {v}");
    let (s, _) = call(&emu, "PATCH", product, json, "{bad").await;
    assert_eq!(s, 400);
    let (s, _) = call(
        &emu,
        "PUT",
        "/projects/demo/prod/shop/models/products/abc",
        json,
        "{}",
    )
    .await;
    assert_eq!(s, 400);
    let (s, _) = call(
        &emu,
        "PUT",
        "/projects/demo/prod/shop/models/products/999",
        json,
        "{}",
    )
    .await;
    assert_eq!(s, 404);
    emu.shutdown().await;
}
