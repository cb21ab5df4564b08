// tracebook offline report: saves a finding's Perfetto trace. The files are
// in the page (#tb-perfetto-files: a JSON object, file name -> gzip + base64 of
// the Chrome-trace JSON); a click on a button[data-tb-perfetto] decodes one
// and hands it to the browser's download through a blob: URL. No network:
// nothing is fetched. Independent of the viewer module: it works in a
// static report too.
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
    return files;
  }

  function bytes(b64) {
    var s = atob(b64.replace(/\s+/g, ""));
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

  async function saveFile(button, name) {
    var b64 = table()[name];
    if (typeof b64 !== "string") {
      say(button, "(not embedded in this report: `tracebook report TRACE --perfetto DIR` writes it)");
      return;
    }
    var gz = bytes(b64);
    if (typeof DecompressionStream === "undefined") {
      // Perfetto opens the gzip-compressed file as it is.
      save(new Blob([gz], { type: "application/gzip" }), name + ".gz");
      button.setAttribute("data-tb-saved", name + ".gz");
      say(button, "(saved " + name + ".gz)");
      return;
    }
    var stream = new Blob([gz]).stream().pipeThrough(new DecompressionStream("gzip"));
    var json = await new Response(stream).blob();
    save(new Blob([json], { type: "application/json" }), name);
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
