#!/usr/bin/env node
// Claude Code hook command: see ../README.md.
import "../dist/bin.js";
