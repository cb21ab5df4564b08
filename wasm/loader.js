// tracebook offline report loader: decodes the embedded viewer module
// (gzip + base85), instantiates it with a minimal WASI shim, and lets it
// re-render the report for each view. No network: nothing is fetched.
(function () {
  "use strict";
  // The page's one base85 decoder: perfetto.js's save buttons use it too
  // (the loader is inlined in every page, and a click comes after load).
  window.tracebookBase85 = base85;
  var root = document.getElementById("tb-root");
  var slot = document.getElementById("tb-slot");
  var status = document.getElementById("tb-status");
  // A diff page (data-tb-kind="diff") carries a diff's input: the module's render_diff renders it.
  var diffPage = root.getAttribute("data-tb-kind") === "diff";
  // noun names what the page shows, in the failure messages.
  var noun = diffPage ? "diff" : "report";

  function fail(msg) {
    root.setAttribute("data-viewer-state", "failed");
    status.className = "tb-status tb-failed";
    status.textContent = "Interactive viewer unavailable: " + msg + " The static " + noun + " below stays readable.";
  }

  // blob returns the bytes of a blob element (still gzip-compressed), by its
  // data-encoding: gzip+base85 (wasm/base85.go), or gzip+base64 in a page
  // written before base85.
  function blob(id) {
    var el = document.getElementById(id);
    if (!el) return null;
    var text = el.textContent;
    if (el.getAttribute("data-encoding") === "gzip+base85") return base85(text);
    // Uint8Array.fromBase64 decodes natively and skips white space.
    if (typeof Uint8Array.fromBase64 === "function") return Uint8Array.fromBase64(text);
    var s = atob(text.replace(/\s+/g, ""));
    var u = new Uint8Array(s.length);
    for (var i = 0; i < s.length; i++) u[i] = s.charCodeAt(i);
    return u;
  }

  // base85 decodes the page's base85 (wasm/base85.go) straight into a
  // Uint8Array: 5 characters -> 4 bytes big-endian, a final group of k
  // characters -> k-1 bytes (padded with the last digit), white space
  // skipped. It throws on anything else.
  var B85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?;_~()[]{}@%$#";
  var b85 = null;
  function base85(text) {
    if (!b85) {
      b85 = new Uint8Array(128).fill(255);
      for (var k = 0; k < 85; k++) b85[B85.charCodeAt(k)] = k;
      b85[32] = b85[9] = b85[10] = b85[12] = b85[13] = 254; // white space
    }
    var len = text.length, out = new Uint8Array(Math.floor(len / 5) * 4 + 3), t = b85;
    var at = 0, v = 0, n = 0, i = 0;
    // Whole groups of the alphabet at once; from the first other character
    // on (white space, an error, the tail), one character at a time.
    for (; i + 5 <= len; i += 5) {
      var c0 = text.charCodeAt(i), c1 = text.charCodeAt(i + 1), c2 = text.charCodeAt(i + 2),
        c3 = text.charCodeAt(i + 3), c4 = text.charCodeAt(i + 4);
      if ((c0 | c1 | c2 | c3 | c4) > 127) break;
      var d0 = t[c0], d1 = t[c1], d2 = t[c2], d3 = t[c3], d4 = t[c4];
      if ((d0 | d1 | d2 | d3 | d4) > 127) break;
      v = (((d0 * 85 + d1) * 85 + d2) * 85 + d3) * 85 + d4;
      if (v > 4294967295) break;
      out[at] = v >>> 24;
      out[at + 1] = v >>> 16;
      out[at + 2] = v >>> 8;
      out[at + 3] = v;
      at += 4;
    }
    v = 0;
    for (; i < len; i++) {
      var c = text.charCodeAt(i), d = c < 128 ? b85[c] : 255;
      if (d > 84) {
        if (d === 254) continue;
        throw new Error("base85: invalid character at offset " + i);
      }
      v = v * 85 + d;
      if (++n === 5) {
        if (v > 4294967295) throw new Error("base85: a group ending at offset " + i + " is out of range");
        out[at] = v >>> 24;
        out[at + 1] = v >>> 16;
        out[at + 2] = v >>> 8;
        out[at + 3] = v;
        at += 4;
        v = 0;
        n = 0;
      }
    }
    if (n === 1) throw new Error("base85: a final group of one character");
    if (n > 0) {
      for (var j = n; j < 5; j++) v = v * 85 + 84;
      if (v > 4294967295) throw new Error("base85: the final group is out of range");
      for (var m = 0; m < n - 1; m++) out[at++] = v >>> (24 - 8 * m);
    }
    return out.subarray(0, at);
  }

  var inst = null;
  function mem() { return new DataView(inst.exports.memory.buffer); }
  function bytes(ptr, len) { return new Uint8Array(inst.exports.memory.buffer, ptr, len); }

  // WASI errno values the shim returns.
  var OK = 0, EBADF = 8, ENOSYS = 52;
  var decoder = new TextDecoder();
  var encoder = new TextEncoder();

  // The WASI imports of the Go wasip1 runtime. A test (wasm/shim_test.go)
  // parses this object and checks it defines every import of the module.
  var wasi = {
    args_sizes_get(argc, bufSize) { var m = mem(); m.setUint32(argc, 0, true); m.setUint32(bufSize, 0, true); return OK; },
    args_get(argv, buf) { return OK; },
    environ_sizes_get(count, bufSize) { var m = mem(); m.setUint32(count, 0, true); m.setUint32(bufSize, 0, true); return OK; },
    environ_get(env, buf) { return OK; },
    clock_time_get(id, precision, out) {
      // The runtime reads the clock often: two 32-bit halves, no BigInt.
      var ns = Math.round(id === 0 ? Date.now() * 1e6 : performance.now() * 1e6);
      var hi = Math.floor(ns / 4294967296), m = mem();
      m.setUint32(out, ns - hi * 4294967296, true);
      m.setUint32(out + 4, hi, true);
      return OK;
    },
    random_get(ptr, len) {
      for (var off = 0; off < len; off += 65536) {
        crypto.getRandomValues(bytes(ptr + off, Math.min(65536, len - off)));
      }
      return OK;
    },
    fd_write(fd, iovs, iovsLen, nwritten) {
      var m = mem(), n = 0, parts = [];
      for (var i = 0; i < iovsLen; i++) {
        var p = m.getUint32(iovs + 8 * i, true), l = m.getUint32(iovs + 8 * i + 4, true);
        parts.push(decoder.decode(bytes(p, l).slice()));
        n += l;
      }
      if (fd === 1 || fd === 2) (fd === 1 ? console.log : console.error)("viewer: " + parts.join(""));
      mem().setUint32(nwritten, n, true);
      return fd === 1 || fd === 2 ? OK : EBADF;
    },
    fd_read(fd, iovs, iovsLen, nread) { mem().setUint32(nread, 0, true); return fd === 0 ? OK : EBADF; },
    fd_close(fd) { return EBADF; },
    fd_fdstat_get(fd, out) {
      if (fd > 2) return EBADF;
      var m = mem();
      m.setUint8(out, 2); // character device
      m.setUint16(out + 2, 0, true);
      m.setBigUint64(out + 8, 0xffffffffffffffffn, true);
      m.setBigUint64(out + 16, 0xffffffffffffffffn, true);
      return OK;
    },
    fd_fdstat_set_flags(fd, flags) { return ENOSYS; },
    fd_prestat_get(fd, out) { return EBADF; },
    fd_prestat_dir_name(fd, path, len) { return EBADF; },
    poll_oneoff(subs, events, n, nevents) {
      // No blocking in a page: every subscription fires at once.
      var m = mem();
      for (var i = 0; i < n; i++) {
        var s = subs + 48 * i, e = events + 32 * i;
        m.setBigUint64(e, m.getBigUint64(s, true), true);
        m.setUint16(e + 8, 0, true);
        m.setUint8(e + 10, m.getUint8(s + 8));
      }
      m.setUint32(nevents, n, true);
      return OK;
    },
    sched_yield() { return OK; },
    proc_exit(code) { throw new Error("the viewer module exited with code " + code); }
  };

  function put(u8) {
    var p = inst.exports.alloc(u8.length);
    bytes(p, u8.length).set(u8);
    return p;
  }

  // result reads and frees a framed result ((ptr << 32) | len): the text
  // after the status byte, or throws the module's message.
  function result(r) {
    var ptr = Number(BigInt.asUintN(64, r) >> 32n), len = Number(BigInt.asUintN(32, r));
    var out = bytes(ptr, len).slice();
    inst.exports.free(ptr);
    var text = decoder.decode(out.subarray(1));
    if (out[0] !== 0) throw new Error(text);
    return text;
  }

  var bundle = null, bundlePtr = 0, view = null;
  // load hands a report's bundle to the module once (load_bundle decodes
  // and keeps it); a diff's input, or a module without load_bundle, gets
  // it with every render instead.
  function load() {
    if (diffPage || !inst.exports.load_bundle) return;
    var p = put(bundle);
    try {
      result(inst.exports.load_bundle(p, bundle.length));
    } finally {
      inst.exports.free(p);
    }
    bundle = null;
  }

  function render() {
    var vb = encoder.encode(JSON.stringify(view)), vp = put(vb), r;
    try {
      if (!bundle) {
        r = inst.exports.render_view(vp, vb.length);
      } else {
        // The bundle is copied in once and kept: the module reuses its decoding.
        if (!bundlePtr) bundlePtr = put(bundle);
        r = (diffPage ? inst.exports.render_diff : inst.exports.render)(bundlePtr, bundle.length, vp, vb.length);
      }
    } finally {
      inst.exports.free(vp);
    }
    return result(r);
  }

  function show(html) {
    slot.innerHTML = html;
  }

  function rerender() {
    try {
      show(render());
      root.setAttribute("data-viewer-state", "ready");
    } catch (e) {
      fail(String(e && e.message || e));
    }
  }

  function wire() {
    root.addEventListener("change", function (ev) {
      var t = ev.target;
      if (t.getAttribute("data-tb") === "rank") {
        view.filter.has_rank = t.value !== "";
        view.filter.rank = t.value === "" ? 0 : parseInt(t.value, 10);
      } else if (t.getAttribute("data-tb") === "phase") {
        if (t.value === "") delete view.filter.phase; else view.filter.phase = t.value;
      } else if (t.hasAttribute("data-tb-rule")) {
        var v = parseFloat(t.value);
        if (!isFinite(v)) return;
        view.thresholds = view.thresholds || {};
        view.thresholds[t.getAttribute("data-tb-rule")] = v;
      } else {
        return;
      }
      rerender();
    });
    root.addEventListener("click", function (ev) {
      var b = ev.target.closest ? ev.target.closest("button[data-tb-sort]") : null;
      if (!b) return;
      var table = b.getAttribute("data-tb-sort"), col = b.getAttribute("data-tb-col");
      view.sort = view.sort || {};
      view.sort[table] = view.sort[table] === "-" + col ? col : "-" + col;
      rerender();
    });
    root.addEventListener("toggle", function (ev) {
      var d = ev.target;
      if (!d.hasAttribute || !d.hasAttribute("data-tb-node")) return;
      var id = d.getAttribute("data-tb-node"), open = view.open || [];
      open = open.filter(function (x) { return x !== id; });
      if (d.open) open.push(id);
      view.open = open;
    }, true);
  }

  // gunzip decompresses in the page (no fetch, no data: URL): the bytes
  // written at once, the output read chunk by chunk and joined. Reading the
  // stream through a Response (new Response(stream).arrayBuffer(), or
  // compileStreaming over it) took two to four times as long in Chromium.
  async function gunzip(u8) {
    var ds = new DecompressionStream("gzip"), w = ds.writable.getWriter();
    var quiet = function () {}; // a failure surfaces in read() below
    w.write(u8).catch(quiet);
    w.close().catch(quiet);
    var r = ds.readable.getReader(), parts = [], n = 0;
    for (;;) {
      var x = await r.read();
      if (x.done) break;
      parts.push(x.value);
      n += x.value.length;
    }
    if (parts.length === 1) return parts[0];
    var out = new Uint8Array(n), at = 0;
    for (var i = 0; i < parts.length; i++) {
      out.set(parts[i], at);
      at += parts[i].length;
    }
    return out;
  }

  // compile decompresses the module and compiles it (off the main thread).
  function compile(gz) {
    return gunzip(gz).then(function (wasm) { return WebAssembly.compile(wasm); });
  }

  // mark records a step of the start in the page's performance timeline
  // (the speed benchmark reads the tb:* marks).
  function mark(name) {
    if (typeof performance !== "undefined" && performance.mark) performance.mark("tb:" + name);
  }

  async function start() {
    mark("start");
    var gz = blob("tb-module");
    if (!gz) {
      fail("this " + noun + " was written by a tracebook built without the viewer module (build it with ./install.sh).");
      return;
    }
    if (typeof DecompressionStream === "undefined" || typeof WebAssembly === "undefined") {
      fail("this browser lacks DecompressionStream or WebAssembly.");
      return;
    }
    // The module compiles, off the main thread, while the bundle decompresses.
    var compiled = compile(gz);
    compiled.catch(function () {}); // awaited below; not an unhandled rejection meanwhile
    gz = null;
    bundle = await gunzip(blob("tb-bundle"));
    mark("bundle");
    view = JSON.parse(document.getElementById("tb-view").textContent);
    if (!view.open) {
      // Keep what the static report shows unfolded; toggles edit this list.
      view.open = Array.prototype.map.call(slot.querySelectorAll("details[data-tb-node][open]"),
        function (d) { return d.getAttribute("data-tb-node"); });
    }
    var mod = await compiled;
    mark("compiled");
    inst = await WebAssembly.instantiate(mod, { wasi_snapshot_preview1: wasi });
    mark("instantiated");
    inst.exports._initialize();
    mark("initialized");
    load();
    mark("loaded");
    var html = render();
    mark("rendered");
    var same = sameAsStatic(html);
    root.setAttribute("data-viewer-parity", same ? "same" : "differs");
    // When they are the same, the static report already shows this rendering.
    if (!same) show(html);
    mark("shown");
    wire();
    status.textContent = diffPage ? "Interactive: filter by rank and phase and sort the change tables — the embedded module compares the two traces again." :
      "Interactive: filter by rank and phase, sort tables, fold the tree, change a rule's threshold — the embedded module recomputes the report.";
    root.setAttribute("data-viewer-state", "ready");
  }

  // sameAsStatic compares the module's first rendering with the static one
  // through the same parser, so serialisation details do not count.
  function sameAsStatic(html) {
    var t = document.createElement("div");
    t.innerHTML = html;
    var open = "<" + "!--", s = slot.innerHTML.replace(open + "tb-static-->", "").replace(open + "/tb-static-->", "");
    return t.innerHTML === s;
  }

  start().catch(function (e) { fail(String(e && e.message || e)); });
})();
