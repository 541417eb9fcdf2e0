//! Client options: the versioned struct, its initialiser, and its conversion to the core's
//! `ClientOptions` (reading only the bytes the caller says its struct has).

use crate::ffi::{self, invalid, FfiResult};
use etcdlock::{ClientOptions, Pem, TlsOptions};
use std::mem::{align_of, offset_of, size_of};
use std::os::raw::{c_char, c_int};
use std::path::PathBuf;
use std::time::Duration;

/// Options for etcdlock_client_new.
///
/// **Versioned by size.** The first member, `struct_size`, says how many bytes of this struct
/// the caller has: set it with `ETCDLOCK_CLIENT_OPTIONS_INIT` (C: all defaults) or
/// `etcdlock_client_options_init(&opts)` (C and C++: explicit defaults), never by hand. The
/// library reads only the fields that lie within `struct_size`; fields a program compiled
/// against an older, smaller struct does not have take their defaults. Newer fields are only
/// ever appended, and a zero (or NULL) field always means its default. A `struct_size` of 0,
/// smaller than the first version of this struct, larger than 4096, or not a multiple of the
/// struct's alignment is ETCDLOCK_E_INVALID_ARGUMENT; so is a larger struct (a program built
/// against a newer library) that sets fields this library does not know.
///
/// TLS (for `https://` endpoints): the CA, the client certificate and its key each come from a
/// file (`*_file`) or from a PEM buffer in memory (`*_pem` + `*_pem_len`), not both. Without a
/// CA the system's roots are trusted. TLS fields with `http://` endpoints are
/// ETCDLOCK_E_INVALID_ARGUMENT. All strings and buffers are copied by etcdlock_client_new.
#[repr(C)]
pub struct etcdlock_client_options {
    /// sizeof(etcdlock_client_options) as the caller was compiled (set by the initialisers).
    pub struct_size: u32,
    /// At most this many requests of this client in flight at once (0 = 256).
    pub max_in_flight: u32,
    /// Bound on the first connection and its probe, in ms (0 = 5000).
    pub connect_timeout_ms: i64,
    /// Bound on each request, retries included, in ms (0 = 5000).
    pub request_timeout_ms: i64,
    /// User name for etcd with authentication enabled, or NULL.
    pub user: *const c_char,
    /// Password for `user` (required when `user` is set). Never shown in error messages.
    pub password: *const c_char,
    /// Path of a PEM file with the CA certificates that sign the members' certificates, or NULL.
    pub ca_file: *const c_char,
    /// The same as PEM text in memory (`ca_pem_len` bytes), or NULL.
    pub ca_pem: *const u8,
    /// Length of `ca_pem` in bytes.
    pub ca_pem_len: usize,
    /// Path of this client's certificate chain (PEM) for members that require client
    /// certificates (mTLS), or NULL. Needs the key too.
    pub cert_file: *const c_char,
    /// The same as PEM text in memory (`cert_pem_len` bytes), or NULL.
    pub cert_pem: *const u8,
    /// Length of `cert_pem` in bytes.
    pub cert_pem_len: usize,
    /// Path of the private key (PEM) of the client certificate, or NULL. Never shown in errors.
    pub key_file: *const c_char,
    /// The same as PEM text in memory (`key_pem_len` bytes), or NULL.
    pub key_pem: *const u8,
    /// Length of `key_pem` in bytes.
    pub key_pem_len: usize,
    /// The name to check in the members' certificates instead of each endpoint's host (for
    /// endpoints given by IP whose certificates name a DNS name), or NULL.
    pub server_name: *const c_char,
    /// The client's name: the `client` label of every series of its metrics (UTF-8, not
    /// empty), or NULL for `etcdlock-<n>`, unique in the process.
    pub name: *const c_char,
}

/// The size of the first version of the struct (up to `password`): the smallest accepted.
const FIRST_SIZE: usize = offset_of!(etcdlock_client_options, ca_file);
/// Sizes above this are garbage, not a future version.
const MAX_SIZE: usize = 4096;
/// Every version ends without padding, so that a field appended later never lands in bytes an
/// older caller left uninitialised.
const _: () = assert!(size_of::<etcdlock_client_options>() == offset_of!(etcdlock_client_options, name) + size_of::<*const c_char>());
const _: () = assert!(FIRST_SIZE % align_of::<etcdlock_client_options>() == 0);

/// Checks a caller's `struct_size`.
fn check_size(size: usize) -> FfiResult {
    const HOW: &str = "initialise it with ETCDLOCK_CLIENT_OPTIONS_INIT or etcdlock_client_options_init(&opts)";
    if size == 0 {
        return Err(invalid(format!("opts->struct_size is 0: {HOW}")));
    }
    if size < FIRST_SIZE || size > MAX_SIZE || size % align_of::<etcdlock_client_options>() != 0 {
        return Err(invalid(format!(
            "opts->struct_size {size} is not the size of any etcdlock_client_options (this library's is {}): {HOW}",
            size_of::<etcdlock_client_options>()
        )));
    }
    Ok(())
}

/// Fills the first `struct_size` bytes of `opts` with the defaults (5 s timeouts, no user,
/// 256 requests in flight, no TLS) and sets `opts->struct_size`. Call it through the
/// `etcdlock_client_options_init(&opts)` macro, which passes `sizeof opts` as the program was
/// compiled. A bad size writes nothing and is ETCDLOCK_E_INVALID_ARGUMENT.
#[no_mangle]
pub unsafe extern "C" fn etcdlock_client_options_init_sized(opts: *mut etcdlock_client_options, struct_size: usize) -> c_int {
    ffi::status(|| {
        if opts.is_null() {
            return Err(invalid("opts must not be NULL"));
        }
        check_size(struct_size)?;
        // SAFETY: the caller has `struct_size` writable bytes at `opts` (the macro passes its
        // sizeof); every field's zero is valid (integers and raw pointers).
        unsafe { std::ptr::write_bytes(opts.cast::<u8>(), 0, struct_size) };
        let o = unsafe { &mut *opts };
        let d = ClientOptions::default();
        o.struct_size = struct_size as u32;
        o.max_in_flight = d.max_in_flight as u32;
        o.connect_timeout_ms = d.connect_timeout.as_millis() as i64;
        o.request_timeout_ms = d.request_timeout.as_millis() as i64;
        Ok(())
    })
}

/// A copy of the caller's options: the fields beyond its `struct_size` are zero (defaults).
unsafe fn read(opts: *const etcdlock_client_options) -> FfiResult<etcdlock_client_options> {
    // SAFETY: a non-NULL options pointer points at least at its struct_size (caller's contract).
    let size = unsafe { std::ptr::read(opts.cast::<u32>()) } as usize;
    check_size(size)?;
    let ours = size_of::<etcdlock_client_options>();
    if size > ours {
        // SAFETY: the caller says it has `size` bytes.
        let newer = unsafe { std::slice::from_raw_parts(opts.cast::<u8>().add(ours), size - ours) };
        if newer.iter().any(|&b| b != 0) {
            return Err(invalid(format!(
                "opts sets fields this libetcdlock ({}) does not know (struct_size {size}, this library's {ours}): \
                 use the libetcdlock the program was built against, or leave them zero",
                env!("CARGO_PKG_VERSION")
            )));
        }
    }
    let mut copy = std::mem::MaybeUninit::<etcdlock_client_options>::zeroed();
    // SAFETY: min(size, ours) readable bytes at `opts`; all-zero is a valid value of the struct.
    unsafe {
        std::ptr::copy_nonoverlapping(opts.cast::<u8>(), copy.as_mut_ptr().cast::<u8>(), size.min(ours));
        Ok(copy.assume_init())
    }
}

/// A file path (any bytes but NUL on Unix) or a PEM buffer, or neither.
unsafe fn pem(file: *const c_char, buf: *const u8, len: usize, what: &str) -> FfiResult<Option<Pem>> {
    if buf.is_null() && len != 0 {
        return Err(invalid(format!("opts->{what}_pem is NULL with {what}_pem_len {len}")));
    }
    match (file.is_null(), buf.is_null()) {
        (true, true) => Ok(None),
        (false, false) => Err(invalid(format!("opts->{what}_file and opts->{what}_pem are both set: give one"))),
        (false, true) => {
            let path = unsafe { ffi::cstr(file, &format!("opts->{what}_file")) }?;
            if path.is_empty() {
                return Err(invalid(format!("opts->{what}_file is empty")));
            }
            Ok(Some(Pem::File(path_of(path))))
        }
        (true, false) => Ok(Some(Pem::Bytes(unsafe { ffi::bytes(buf, len, what) }?.to_vec()))),
    }
}

#[cfg(unix)]
fn path_of(bytes: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
}

#[cfg(not(unix))]
fn path_of(bytes: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
}

/// The core's options for `opts` (NULL: the defaults).
pub(crate) unsafe fn convert(opts: *const etcdlock_client_options) -> FfiResult<ClientOptions> {
    let mut o = ClientOptions::default();
    if opts.is_null() {
        return Ok(o);
    }
    let c = unsafe { read(opts) }?;
    let ms = |v: i64, what: &str| match v {
        0 => Ok(None),
        v if v > 0 => Ok(Some(Duration::from_millis(v as u64))),
        v => Err(invalid(format!("{what} must not be negative, got {v}"))),
    };
    if let Some(d) = ms(c.connect_timeout_ms, "connect_timeout_ms")? {
        o.connect_timeout = d;
    }
    if let Some(d) = ms(c.request_timeout_ms, "request_timeout_ms")? {
        o.request_timeout = d;
    }
    if c.max_in_flight > 0 {
        o.max_in_flight = c.max_in_flight as usize;
    }
    match (c.user.is_null(), c.password.is_null()) {
        (true, true) => {}
        (false, false) => {
            let user = unsafe { ffi::utf8(c.user, "opts->user") }?;
            let password = unsafe { ffi::utf8(c.password, "opts->password") }?;
            o.user = Some((user.to_string(), password.to_string()));
        }
        (false, true) => return Err(invalid("opts->password must be set when opts->user is")),
        (true, false) => return Err(invalid("opts->user must be set when opts->password is")),
    }
    let tls = TlsOptions {
        ca: unsafe { pem(c.ca_file, c.ca_pem, c.ca_pem_len, "ca") }?,
        cert: unsafe { pem(c.cert_file, c.cert_pem, c.cert_pem_len, "cert") }?,
        key: unsafe { pem(c.key_file, c.key_pem, c.key_pem_len, "key") }?,
        server_name: match c.server_name.is_null() {
            true => None,
            false => Some(unsafe { ffi::utf8(c.server_name, "opts->server_name") }?.to_string()),
        },
    };
    if tls != TlsOptions::default() {
        o.tls = Some(tls);
    }
    if !c.name.is_null() {
        o.name = Some(unsafe { ffi::utf8(c.name, "opts->name") }?.to_string());
    }
    Ok(o)
}
