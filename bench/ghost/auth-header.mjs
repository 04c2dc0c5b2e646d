#!/usr/bin/env node
// Prints the header Ghost's Admin API wants, made fresh on every run:
//   Authorization: Ghost <jwt>
// (Admin API key of the "Bench" integration in $BENCH_GHOST_DIR/admin-key.json, HS256, 5-minute
// expiry). Example: curl -H "$(node bench/ghost/auth-header.mjs)" http://127.0.0.1:2368/ghost/api/admin/members/?limit=50
/* global console */
import { adminJwt } from './lib.mjs';

console.log(`Authorization: Ghost ${adminJwt()}`);
