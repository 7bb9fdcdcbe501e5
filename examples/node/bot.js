#!/usr/bin/env node
// A vae agent bot in Node.js: speaks BridgeService.Converse using only
// @grpc/grpc-js and @grpc/proto-loader, loading vae's .proto files directly.
//
// What it does, in contract order:
//   Join (role AGENT) -> Joined -> waits for SessionStart
//   greets, then answers each utterance it hears with a short tone (real PCM16
//   audio, 20 ms chunks paced in real time), reporting a spoken Transcript,
//   SpeechStarted/SpeechStopped (TTS) and a TokenUsage per answer
//   after `answers` answers: one ToolCall (a write action on its small JSON
//   state), then EndConversation(AGENT_END_TOOL)
//   SessionEnding -> FinalState (state + context, chunked JSON, done=true)
//   SessionEnded -> closes the stream.
//
// Text sessions (vae run --modality text): it declares Join.supports_text, and
// when SessionStart.modality is MODALITY_TEXT it sends no audio at all: it
// greets with a TextTurn, answers each of the peer's TextTurns with one of its
// own (the bridge records them as spoken transcripts, so it sends no
// Transcript events), then calls its tool and ends as in audio. It does not
// declare the virtual clock (docs/contract.md shows what that would take).
//
// It holds --concurrency sessions at once (one Converse stream each) and keeps
// joining until stopped (SIGINT/SIGTERM) or --sessions sessions are played
// (streams still waiting are released then, sessions in progress finish, so it
// may report more); then it prints {"sessions": [...]} on stdout and exits 0. A stream that
// fails is reopened with backoff (the bridge may be restarting); a refused
// token, or --max-tries failures in a row (a wrong --tls-ca, no bridge), end
// it with a message naming the option, exit status 1.
//
// Usage: node bot.js [--bridge 127.0.0.1:50051] [--run RUN_ID] [--token TOKEN]
//                    [--tls-ca ca.pem] [--concurrency 1] [--sessions 0] [--max-tries 10]
// Environment: VAE_BRIDGE, VAE_RUN, VAE_TOKEN, VAE_TLS_CA, VAE_CONCURRENCY,
//              VAE_SESSIONS, VAE_MAX_TRIES, VAE_PROTO_DIR.
// Scenario knobs (side_config_json of the agent side, all optional):
//   {"node_bot": {"answers": 1, "tool": {"name": "book", "arguments": {...}}}}
'use strict';

const grpc = require('@grpc/grpc-js');
const { loadVae, option, metadataFor, credentialsFor } = require('./vae_proto');

const RATE = 16000;
const CHUNK_MS = 20;
const CHUNK_SAMPLES = (RATE * CHUNK_MS) / 1000;
const SPEECH_DBFS = -40; // louder than this is speech
const END_OF_TURN_MS = 500; // this much quiet after speech ends the peer's turn
const JSON_CHUNK_BYTES = 64 * 1024;

function nowNs() {
  return (BigInt(Date.now()) * 1000000n).toString();
}

function toneChunk(offset, samples, freq) {
  const buf = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i += 1) {
    const t = (offset + i) / RATE;
    buf.writeInt16LE(Math.round(Math.sin(2 * Math.PI * freq * t) * 0.3 * 32767), i * 2);
  }
  return buf;
}

function dbfs(pcm) {
  const n = Math.floor(pcm.length / 2);
  if (n === 0) return -120;
  let sum = 0;
  for (let i = 0; i < n; i += 1) {
    const v = pcm.readInt16LE(i * 2) / 32768;
    sum += v * v;
  }
  return 10 * Math.log10(sum / n + 1e-12);
}

function jsonChunks(doc) {
  const data = Buffer.from(JSON.stringify(doc), 'utf8');
  const chunks = [];
  for (let offset = 0; offset < data.length || offset === 0; offset += JSON_CHUNK_BYTES) {
    const part = data.subarray(offset, offset + JSON_CHUNK_BYTES);
    chunks.push({ offset, data: part, last: offset + JSON_CHUNK_BYTES >= data.length });
    if (data.length === 0) break;
  }
  return chunks;
}

class AgentBot {
  constructor(call, log) {
    this.call = call;
    this.log = log;
    this.seq = 0;
    this.offset = 0; // our outgoing sample clock
    this.speaking = false;
    this.heardSpeech = false;
    this.quietMs = 0;
    this.answers = 0;
    this.ending = false;
    this.state = {};
    this.context = [];
    this.wantAnswers = 1;
    this.tool = { name: 'record_outcome', arguments: { outcome: 'answered' } };
    this.start = null;
    this.utterance = null;
    this.pump = null;
    this.text = false; // a text session: TextTurns instead of audio
    this.textSeq = 0;
  }

  send(message) {
    if (!this.call.writable) return;
    this.call.write(message);
  }

  event(body) {
    this.send({ event: { bot_unix_nanos: nowNs(), ...body } });
  }

  onSessionStart(start) {
    this.start = start;
    this.state = JSON.parse(start.initial_state_json || '{}');
    const side = JSON.parse(start.side_config_json || '{}').node_bot || {};
    if (Number.isInteger(side.answers)) this.wantAnswers = side.answers;
    if (side.tool && side.tool.name) this.tool = side.tool;
    this.context.push({ role: 'system', content: start.system_prompt });
    this.text = start.modality === 'MODALITY_TEXT';
    this.log(
      `session ${start.session.session_id} (${start.session.scenario_name}) started`
      + ` (${this.text ? 'text' : 'audio'})`,
    );
    const greets = start.first_speaker !== 'ROLE_USER';
    if (this.text) {
      // Greet unless the bridge says the user opens the call (SessionStart.first_speaker).
      if (greets) this.say('Hello, this is the Node agent.');
      return;
    }
    this.startPump();
    if (greets) {
      setTimeout(() => this.speak('Hello, this is the Node agent.', 0.6), 300);
    }
  }

  // A text session: the peer's whole turn. Answer it with a whole turn.
  onPeerText(turn) {
    if (this.ending) return;
    this.context.push({ role: 'user', content: turn.text });
    this.answers += 1;
    const done = this.answers >= this.wantAnswers;
    this.say(done ? 'All done, goodbye.' : 'I heard you, please go on.');
    if (done) this.finish();
  }

  // One TextTurn (the bridge records it as this bot's spoken transcript).
  say(text) {
    this.event({ token_usage: { model: 'node-tone', prompt_tokens: 40 + this.answers, completion_tokens: 8 } });
    this.send({ text: { text, sequence: String(this.textSeq), sent_unix_nanos: nowNs() } });
    this.textSeq += 1;
    this.context.push({ role: 'assistant', content: text });
  }

  // Peer audio arrives on the bridge's open-mic clock (silence when quiet).
  onPeerAudio(chunk) {
    if (this.speaking || this.ending) return;
    const ms = (chunk.pcm.length / 2 / RATE) * 1000;
    if (dbfs(chunk.pcm) > SPEECH_DBFS) {
      this.heardSpeech = true;
      this.quietMs = 0;
      return;
    }
    if (!this.heardSpeech) return;
    this.quietMs += ms;
    if (this.quietMs >= END_OF_TURN_MS) {
      this.heardSpeech = false;
      this.quietMs = 0;
      this.answer();
    }
  }

  answer() {
    this.answers += 1;
    this.context.push({ role: 'user', content: '(speech)' });
    const done = this.answers >= this.wantAnswers;
    const text = done ? 'All done, goodbye.' : 'I heard you, please go on.';
    this.speak(text, 0.8).then(() => {
      if (done) this.finish();
    });
  }

  // The outgoing line: from SessionStart on, one 20 ms chunk per 20 ms of wall
  // clock, tone while speaking and silence otherwise, like a microphone.
  startPump() {
    const t0 = Date.now();
    this.pump = setInterval(() => {
      if (this.ending) return;
      const due = Math.floor(((Date.now() - t0) / 1000) * RATE);
      while (this.offset + CHUNK_SAMPLES <= due) this.sendChunk();
    }, CHUNK_MS / 2);
  }

  sendChunk() {
    let pcm = Buffer.alloc(CHUNK_SAMPLES * 2);
    const u = this.utterance;
    if (u) {
      pcm = toneChunk(this.offset, CHUNK_SAMPLES, 330);
      u.left -= CHUNK_SAMPLES;
    }
    this.send({ audio: { sequence: this.seq, sample_offset: this.offset, pcm, sent_unix_nanos: nowNs() } });
    this.seq += 1;
    this.offset += CHUNK_SAMPLES;
    if (u && u.left <= 0) {
      this.utterance = null;
      this.speaking = false;
      this.event({ speech_stopped: { source: 'SPEECH_SOURCE_TTS', sample_offset: this.offset } });
      this.event({
        transcript: {
          kind: 'TRANSCRIPT_KIND_SPOKEN', text: u.text, is_final: true,
          start_unix_nanos: '0', end_unix_nanos: nowNs(), start_sample_offset: u.start, end_sample_offset: this.offset,
        },
      });
      this.context.push({ role: 'assistant', content: u.text });
      u.done();
    }
  }

  // Speak `seconds` of tone; resolves when its last chunk has been sent.
  speak(text, seconds) {
    this.speaking = true;
    this.event({ speech_started: { source: 'SPEECH_SOURCE_TTS', sample_offset: this.offset } });
    this.event({ token_usage: { model: 'node-tone', prompt_tokens: 40 + this.answers, completion_tokens: 8 } });
    return new Promise((resolve) => {
      this.utterance = { text, left: Math.round(seconds * RATE), start: this.offset, done: resolve };
    });
  }

  finish() {
    const args = this.tool.arguments || {};
    const started = nowNs();
    this.state.node_bot = { ...(this.state.node_bot || {}), [this.tool.name]: args };
    this.event({
      tool_call: {
        call_id: 'node-1', name: this.tool.name, arguments_json: JSON.stringify(args),
        result_json: JSON.stringify({ ok: true }), side: 'ROLE_AGENT', is_write: true,
        started_unix_nanos: started, finished_unix_nanos: nowNs(),
      },
    });
    this.context.push({ role: 'assistant', tool_calls: [{ name: this.tool.name, arguments: args }] });
    this.event({ end_conversation: { kind: 'END_KIND_AGENT_END_TOOL', reason: 'task complete' } });
  }

  stop() {
    if (this.pump) clearInterval(this.pump);
    this.pump = null;
  }

  onSessionEnding(ending) {
    this.ending = true;
    this.stop();
    this.log(`session ending: ${ending.reason}`);
    const state = jsonChunks(this.state);
    const context = jsonChunks(this.context);
    const n = Math.max(state.length, context.length);
    for (let i = 0; i < n; i += 1) {
      this.send({ final_state: { state: state[i], context: context[i], done: i === n - 1 } });
    }
  }
}

// One Converse stream: Join, wait for a session, play it. Resolves with the
// session's outcome (null when the bridge released the stream with
// WaitTimeout); rejects with the gRPC error when the stream fails before its
// session ended. onCall(call) when the stream opens, onCall(call, 'session')
// when its session starts, onCall(null, call) when the stream is over.
function playOneSession(client, { runFilter, token, log, onCall }) {
  const call = client.Converse(metadataFor(token));
  if (onCall) onCall(call);
  const bot = new AgentBot(call, log);
  return new Promise((resolve, reject) => {
    let outcome = null;
    call.on('data', (msg) => {
      switch (msg.message) {
        case 'joined':
          log(`joined as ${msg.joined.stream_id}; frames of ${msg.joined.frame_ms} ms`);
          break;
        case 'session_start':
          if (onCall) onCall(call, 'session');
          bot.onSessionStart(msg.session_start);
          break;
        case 'audio':
          bot.onPeerAudio(msg.audio);
          break;
        case 'text':
          bot.onPeerText(msg.text);
          break;
        case 'session_ending':
          bot.onSessionEnding(msg.session_ending);
          break;
        case 'session_ended':
          outcome = {
            session_id: bot.start ? bot.start.session.session_id : '',
            scenario: bot.start ? bot.start.session.scenario_name : '',
            reason: msg.session_ended.reason,
            clean_exit: msg.session_ended.clean_exit,
          };
          log(`session ended: ${outcome.reason}, clean exit ${outcome.clean_exit}`);
          call.end(); // half-close: we send nothing more; the bridge closes its side
          break;
        case 'wait_timeout':
          call.end();
          break;
        default:
          break;
      }
    });
    call.on('error', (err) => {
      bot.stop();
      // After session_ended the session is over and recorded: keep its outcome.
      if (outcome !== null || err.code === grpc.status.CANCELLED) resolve(outcome);
      else reject(err);
    });
    call.on('end', () => {
      bot.stop();
      resolve(outcome);
    });
    call.on('status', () => {
      if (onCall) onCall(null, call);
    });
    call.write({
      join: {
        role: 'ROLE_AGENT',
        bot: { name: 'node-example-agent', version: '0.2.0', labels: { language: 'javascript' } },
        send_format: { encoding: 'AUDIO_ENCODING_PCM16LE', sample_rate_hz: RATE, channels: 1 },
        receive_format: { encoding: 'AUDIO_ENCODING_PCM16LE', sample_rate_hz: RATE, channels: 1 },
        run_filter: runFilter || '',
        supports_text: true,
      },
    });
  });
}

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

// What a failed call means for the user, naming the option that fixes it.
function explain(err, { bridge, tlsCa }) {
  const what = `${grpc.status[err.code] || err.code}: ${err.details || err.message}`;
  if (err.code === grpc.status.UNAUTHENTICATED) {
    return `the bridge at ${bridge} refused the bot (${what}); pass its token with --token or VAE_TOKEN`;
  }
  if (tlsCa) {
    return `cannot use the bridge at ${bridge} (${what}); if it is up, the TLS handshake failed: `
      + '--tls-ca (VAE_TLS_CA) must be the CA certificate that signed the bridge\'s --tls-cert';
  }
  return `cannot use the bridge at ${bridge} (${what}); is it running? If it serves TLS, pass --tls-ca`;
}

// Hold `concurrency` sessions at once and keep joining until stopped (or
// `sessions` sessions in all). A stream that fails is reopened with backoff
// (0.2 s doubling to 5 s): the bridge may be restarting. `maxTries`
// consecutive failures, or a refused token, end the bot with a clear message.
async function runBot({
  bridge, runFilter = '', token = '', tlsCa = '', concurrency = 1, sessions = 0,
  maxTries = 10, log = console.log, stop = { stopped: false, calls: new Set() },
}) {
  const waiting = new Set(); // streams joined but given no session yet
  const vae = loadVae();
  const client = new vae.bridge.v1.BridgeService(bridge, credentialsFor(tlsCa));
  const outcomes = [];
  let fatal = null;
  const enough = () => stop.stopped || fatal !== null || (sessions > 0 && outcomes.length >= sessions);

  async function worker(index) {
    let failures = 0;
    let backoff = 200;
    while (!enough()) {
      try {
        const outcome = await playOneSession(client, {
          runFilter,
          token,
          log,
          onCall: (call, done) => {
            if (!call) {
              stop.calls.delete(done);
              waiting.delete(done);
            } else if (done === 'session') {
              waiting.delete(call);
            } else {
              stop.calls.add(call);
              waiting.add(call);
            }
          },
        });
        failures = 0;
        backoff = 200;
        if (outcome !== null) outcomes.push(outcome);
        // Enough sessions: release the streams still waiting for one. Sessions other
        // workers are playing go on to their end (cancelling them would cut calls).
        if (enough()) for (const call of waiting) call.cancel();
      } catch (err) {
        if (stop.stopped) return;
        failures += 1;
        if (err.code === grpc.status.UNAUTHENTICATED || err.code === grpc.status.INVALID_ARGUMENT
            || failures >= maxTries) {
          fatal = fatal || `${explain(err, { bridge, tlsCa })} (after ${failures} tries)`;
          return;
        }
        log(`worker ${index}: ${grpc.status[err.code] || ''} ${err.details || err.message}; retrying in ${backoff} ms`);
        await sleep(backoff);
        backoff = Math.min(backoff * 2, 5000);
      }
    }
  }

  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, (_, i) => worker(i)));
  client.close();
  if (fatal !== null) throw new Error(fatal);
  return outcomes;
}

if (require.main === module) {
  const log = (m) => console.error(`[node-bot] ${m}`);
  const stop = { stopped: false, calls: new Set() };
  const halt = () => {
    stop.stopped = true;
    for (const call of stop.calls) call.cancel(); // leave sessions and waiting streams now
  };
  process.on('SIGINT', halt);
  process.on('SIGTERM', halt);
  runBot({
    bridge: option('--bridge', 'VAE_BRIDGE', '127.0.0.1:50051'),
    runFilter: option('--run', 'VAE_RUN', ''),
    token: option('--token', 'VAE_TOKEN', ''),
    tlsCa: option('--tls-ca', 'VAE_TLS_CA', ''),
    concurrency: Number(option('--concurrency', 'VAE_CONCURRENCY', '1')),
    sessions: Number(option('--sessions', 'VAE_SESSIONS', '0')),
    maxTries: Number(option('--max-tries', 'VAE_MAX_TRIES', '10')),
    log,
    stop,
  })
    .then((outcomes) => {
      console.log(JSON.stringify({ sessions: outcomes }));
      process.exit(0);
    })
    .catch((err) => {
      console.error(`[node-bot] error: ${err.message}`);
      process.exit(1);
    });
}

module.exports = { runBot, playOneSession, AgentBot };
