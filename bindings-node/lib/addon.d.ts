export = native;
import native = require("../native.js");
