//! The value etcd's Go endpoints manager writes for a gRPC endpoint, and its gRPC resolver reads:
//! the JSON of its `internal.Update`, `{"Op":0,"Addr":"<host:port>","Metadata":null}` (Op 0 is
//! "add"), in the field order Go's `json.Marshal` gives.

/// The value that makes an instance resolvable by Go's `naming/resolver` (target
/// `etcd:///<service>`): register it as `<service>/<instance>`.
///
/// ```
/// let v = etcdlock::grpc_endpoint("10.0.0.7:50051");
/// assert_eq!(v, br#"{"Op":0,"Addr":"10.0.0.7:50051","Metadata":null}"#);
/// assert_eq!(etcdlock::grpc_endpoint_addr(&v).as_deref(), Some("10.0.0.7:50051"));
/// ```
pub fn grpc_endpoint(addr: &str) -> Vec<u8> {
    format!(r#"{{"Op":0,"Addr":{},"Metadata":null}}"#, json_string(addr)).into_bytes()
}

/// The address of an endpoint value written by Go's endpoints manager or [`grpc_endpoint`]
/// (`None` for any other value, or a delete update).
pub fn grpc_endpoint_addr(value: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(value).ok()?;
    let rest = text.trim_start().strip_prefix('{')?;
    let rest = rest.trim_start().strip_prefix(r#""Op""#)?.trim_start().strip_prefix(':')?.trim_start();
    let rest = rest.strip_prefix('0')?.trim_start().strip_prefix(',')?.trim_start();
    let rest = rest.strip_prefix(r#""Addr""#)?.trim_start().strip_prefix(':')?.trim_start();
    parse_string(rest)
}

fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The JSON string at the start of `s`.
fn parse_string(s: &str) -> Option<String> {
    let mut chars = s.strip_prefix('"')?.chars();
    let mut out = String::new();
    loop {
        match chars.next()? {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'u' => {
                    let hex: String = chars.by_ref().take(4).collect();
                    out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                }
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                'b' => out.push('\u{8}'),
                'f' => out.push('\u{c}'),
                c => out.push(c),
            },
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_values_read_back() {
        // As Go's json.Marshal writes them (with metadata, and with HTML-safe escapes).
        assert_eq!(grpc_endpoint_addr(br#"{"Op":0,"Addr":"127.0.0.1:7000","Metadata":{"zone":"a"}}"#).as_deref(), Some("127.0.0.1:7000"));
        assert_eq!(grpc_endpoint_addr(br#"{"Op":0,"Addr":"h\u003cx\u003e:1","Metadata":null}"#).as_deref(), Some("h<x>:1"));
        assert_eq!(grpc_endpoint_addr(br#"{"Op":1,"Addr":"127.0.0.1:7000","Metadata":null}"#), None, "a delete update");
        assert_eq!(grpc_endpoint_addr(b"plain value"), None);
        assert_eq!(grpc_endpoint_addr(&grpc_endpoint("a\"b:1")).as_deref(), Some("a\"b:1"));
    }
}
