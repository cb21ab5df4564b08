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
    // base85 is the loader's decoder (loader.js), inlined in every page.
    if (el && el.getAttribute("data-encoding") === "gzip+base85") return window.tracebookBase85(text);
    var s = atob(text.replace(/\s+/g, ""));
    var u = new Uint8Array(s.length);
    for (var i = 0; i < s.length; i++) u[i] = s.charCodeAt(i);
    return u;
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
