// tracebook offline report: saves a finding's Perfetto trace. The files are
// in the page (#tb-perfetto-files: {"files": {name: [head, body id]},
// "bodies": {id: body}}, each part gzip + base85; a file is its head then
// its body, and findings with the same window share the body); a click on a
// button[data-tb-perfetto] decodes one and hands it to the browser's
// download through a blob: URL. No network: nothing is fetched. Independent
// of the viewer module: it works in a static report too.
(function () {
  "use strict";
  var files = null;

  function table() {
    if (files) return files;
    var el = document.getElementById("tb-perfetto-files");
    try {
      files = el ? JSON.parse(el.textContent) : {};
    } catch (e) {
      files = {};
    }
    files.files = files.files || {};
    files.bodies = files.bodies || {};
    return files;
  }

  // bytes decodes one part (still gzip-compressed): base85, or base64 in a
  // page written before base85.
  function bytes(text) {
    var el = document.getElementById("tb-perfetto-files");
    if (el && el.getAttribute("data-encoding") === "gzip+base85") return base85(text);
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

  function say(button, text) {
    var note = button.nextElementSibling;
    if (!note || !note.hasAttribute("data-tb-perfetto-note")) {
      note = document.createElement("span");
      note.setAttribute("data-tb-perfetto-note", "");
      note.className = "tb-tag";
      button.parentNode.insertBefore(note, button.nextSibling);
    }
    note.textContent = " " + text;
  }

  function save(blob, name) {
    var url = URL.createObjectURL(blob);
    var a = document.createElement("a");
    a.href = url;
    a.download = name;
    a.hidden = true;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(function () { URL.revokeObjectURL(url); }, 60000);
  }

  function inflate(gz) {
    var stream = new Blob([gz]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).blob();
  }

  async function saveFile(button, name) {
    var t = table(), entry = t.files[name];
    var body = entry ? t.bodies[entry[1]] : undefined;
    if (!entry || typeof entry[0] !== "string" || typeof body !== "string") {
      say(button, "(not embedded in this report: `tracebook report TRACE --perfetto DIR` writes it)");
      return;
    }
    var head = bytes(entry[0]), rest = bytes(body);
    if (typeof DecompressionStream === "undefined") {
      // Two gzip members make one gzip file, which Perfetto opens as it is.
      save(new Blob([head, rest], { type: "application/gzip" }), name + ".gz");
      button.setAttribute("data-tb-saved", name + ".gz");
      say(button, "(saved " + name + ".gz)");
      return;
    }
    var json = new Blob([await inflate(head), await inflate(rest)], { type: "application/json" });
    save(json, name);
    button.setAttribute("data-tb-saved", name);
    say(button, "(saved " + name + ": " + json.size + " bytes)");
  }

  document.addEventListener("click", function (ev) {
    var b = ev.target && ev.target.closest ? ev.target.closest("button[data-tb-perfetto]") : null;
    if (!b) return;
    ev.preventDefault();
    saveFile(b, b.getAttribute("data-tb-perfetto")).catch(function (e) {
      say(b, "(could not save: " + String(e && e.message || e) + ")");
    });
  });
})();
