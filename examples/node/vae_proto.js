// Loading vae's contract straight from its .proto files (no generated code).
//
// The proto root defaults to ../../protos (this repository's layout); set
// VAE_PROTO_DIR to point elsewhere. Options: snake_case field names as in the
// .proto files, enums as their names, 64-bit integers as strings, oneofs
// exposed as a `message`/`event`/... property naming the field that is set.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTO_DIR = process.env.VAE_PROTO_DIR || path.resolve(__dirname, '..', '..', 'protos');
const FILES = ['vae/common/v1/common.proto', 'vae/bridge/v1/bridge.proto', 'vae/scorer/v1/scorer.proto'];

function loadVae(protoDir = PROTO_DIR) {
  const definition = protoLoader.loadSync(FILES, {
    includeDirs: [protoDir],
    keepCase: true,
    enums: String,
    longs: String,
    bytes: Buffer,
    defaults: true,
    oneofs: true,
  });
  return grpc.loadPackageDefinition(definition).vae;
}

// `--name value` from argv, else the environment variable, else the default.
function option(name, envName, fallback) {
  const i = process.argv.indexOf(name);
  if (i >= 0 && i + 1 < process.argv.length) return process.argv[i + 1];
  return process.env[envName] || fallback;
}

// Call metadata carrying the bearer token, when one is set.
function metadataFor(token) {
  const md = new grpc.Metadata();
  if (token) md.set('authorization', `Bearer ${token}`);
  return md;
}

// Channel credentials: TLS trusting the CA certificate file `tlsCa`, else plaintext.
function credentialsFor(tlsCa) {
  if (!tlsCa) return grpc.credentials.createInsecure();
  return grpc.credentials.createSsl(fs.readFileSync(tlsCa));
}

module.exports = { loadVae, option, metadataFor, credentialsFor, PROTO_DIR };
