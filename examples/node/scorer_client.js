#!/usr/bin/env node
// A small vae scorer client in Node.js: Rescore a run, then ListScorings.
//
// Usage: node scorer_client.js --run RUN [--scorer 127.0.0.1:50052] [--token TOKEN]
//                              [--scorers action_match,clean_exit] [--overwrite]
//                              [--tls-ca ca.pem]
// Environment: VAE_SCORER, VAE_RUN, VAE_TOKEN, VAE_TLS_CA, VAE_PROTO_DIR.
//
// Prints one JSON document on stdout:
//   {"progress": [...sessions done...], "scoring": {...}, "summary": {...},
//    "scorings": [...every scoring of the run...]}
// Exit code 0 when the rescore completed, 1 on any gRPC error (its status is
// printed on stderr, e.g. NOT_FOUND for an unknown run).
'use strict';

const grpc = require('@grpc/grpc-js');
const { loadVae, option, metadataFor, credentialsFor } = require('./vae_proto');

function rescore(client, request, token) {
  return new Promise((resolve, reject) => {
    const progress = [];
    let scoring = null;
    const stream = client.Rescore(request, metadataFor(token));
    stream.on('data', (msg) => {
      if (msg.progress === 'session') {
        progress.push({
          done: msg.sessions_done,
          total: msg.sessions_total,
          session_id: msg.session.session_id,
          scenario: msg.session.scenario_name,
          is_successful: msg.session.is_successful,
        });
      } else if (msg.progress === 'scoring') {
        scoring = msg.scoring;
      }
    });
    stream.on('error', reject);
    stream.on('end', () => resolve({ progress, scoring }));
  });
}

function listScorings(client, run, token) {
  return new Promise((resolve, reject) => {
    client.ListScorings({ run }, metadataFor(token), (err, res) => (err ? reject(err) : resolve(res.scorings)));
  });
}

async function main() {
  const address = option('--scorer', 'VAE_SCORER', '127.0.0.1:50052');
  const run = option('--run', 'VAE_RUN', '');
  const token = option('--token', 'VAE_TOKEN', '');
  const scorers = option('--scorers', 'VAE_SCORERS', '');
  if (!run) {
    console.error('usage: node scorer_client.js --run RUN [--scorer ADDR] [--token TOKEN]');
    process.exit(2);
  }
  const vae = loadVae();
  const client = new vae.scorer.v1.ScorerService(address, credentialsFor(option('--tls-ca', 'VAE_TLS_CA', '')));
  const request = {
    run,
    config: { scorers: scorers ? scorers.split(',') : [], label: 'node-example' },
    mode: process.argv.includes('--overwrite') ? 'WRITE_MODE_OVERWRITE' : 'WRITE_MODE_APPEND',
  };
  const { progress, scoring } = await rescore(client, request, token);
  const scorings = await listScorings(client, run, token);
  const summary = scoring && scoring.summary_json ? JSON.parse(scoring.summary_json) : null;
  console.log(JSON.stringify({ progress, scoring, summary, scorings }, null, 2));
  client.close();
}

main().catch((err) => {
  console.error(`[scorer-client] ${err.code !== undefined ? `gRPC ${grpc.status[err.code]}: ` : ''}${err.details || err.message}`);
  process.exit(1);
});
