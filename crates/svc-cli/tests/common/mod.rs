//! What the binary tests share: a scripted HTTP/1.1 server on loopback, and running `svc`
//! ([`run`]).

// Each test file that includes `common` uses a part of it.
#![allow(dead_code)]

pub mod run;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener};

/// One request, as the scripted server read it.
pub struct Request {
    pub method: String,
    /// The path and query.
    pub target: String,
    pub body: Vec<u8>,
}

/// A server on loopback that answers every request with `answer(request)`: a status (such as
/// `"200 OK"`) and a JSON body. One connection per request (`Connection: close`).
pub fn serve(answer: fn(&Request) -> (&'static str, String)) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut first = String::new();
            if reader.read_line(&mut first).is_err() {
                continue;
            }
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some((name, value)) = line.split_once(':')
                    && name.eq_ignore_ascii_case("content-length")
                {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let mut parts = first.split_whitespace();
            let request = Request {
                method: parts.next().unwrap_or_default().to_owned(),
                target: parts.next().unwrap_or_default().to_owned(),
                body,
            };
            let (status, answer) = answer(&request);
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    addr
}
