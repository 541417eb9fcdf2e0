'use strict';
// The native addon (../native.js), set up for this JS thread before anything uses it: every
// module that calls the addon gets it from here.

const native = require('../native.js');
const log = require('../log.js');

// The native side settles every promise through one threadsafe function per JS thread, which
// napi wants a JS function for; this one is never called for anything else.
native.initCompletions(() => {});
// The library's events on diagnostics_channel and NODE_DEBUG=etcdlock (log.js).
log.start(native);

module.exports = native;
