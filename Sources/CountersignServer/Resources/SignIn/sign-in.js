(function () {
  "use strict";

  // A remembered browser's key: an ECDSA P-256 key pair made here by WebCrypto, the private
  // half not extractable, kept in IndexedDB under the tenant's name and the public key's x
  // (so that a key made for a sign-in that was then denied never replaces one in use). Only
  // its public half leaves the browser; the server checks its signature over a fresh
  // challenge at each use.
  function keyStore(mode, use) {
    return new Promise(function (resolve, reject) {
      if (!window.indexedDB || !window.crypto || !window.crypto.subtle) { reject(new Error("unsupported")); return; }
      var opening = window.indexedDB.open("countersign", 1);
      opening.onupgradeneeded = function () { opening.result.createObjectStore("remembered-browsers"); };
      opening.onerror = function () { reject(opening.error); };
      opening.onsuccess = function () {
        var db = opening.result;
        var transaction = db.transaction("remembered-browsers", mode);
        var request = use(transaction.objectStore("remembered-browsers"));
        transaction.oncomplete = function () { db.close(); resolve(request ? request.result : undefined); };
        transaction.onerror = function () { db.close(); reject(transaction.error); };
      };
    });
  }

  function base64url(buffer) {
    var bytes = new Uint8Array(buffer), text = "";
    for (var i = 0; i < bytes.length; i++) { text += String.fromCharCode(bytes[i]); }
    return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  // The waiting page: asks until the phone has answered, then submits the form, with a new
  // key's public half when the person ticked "Remember this browser".
  var form = document.getElementById("continue-form");
  if (form) {
    var waitURL = form.getAttribute("data-wait");
    var keyName = form.getAttribute("data-key-name");
    var remember = document.getElementById("remember");
    var keyField = form.querySelector("input[name=remember_key]");
    var body = new URLSearchParams(new FormData(form));
    var prepared = function () {
      if (!remember || !remember.checked || !keyField || keyField.value) { return Promise.resolve(); }
      return window.crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, ["sign", "verify"])
        .then(function (pair) {
          return window.crypto.subtle.exportKey("jwk", pair.publicKey).then(function (jwk) {
            return keyStore("readwrite", function (store) { return store.put(pair.privateKey, keyName + ":" + jwk.x); })
              .then(function () { keyField.value = JSON.stringify({ kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y }); });
          });
        })
        .catch(function () { keyField.value = ""; });
    };
    var send = function () { prepared().then(function () { form.submit(); }); };
    form.addEventListener("submit", function (event) {
      if (remember && remember.checked && keyField && !keyField.value) { event.preventDefault(); send(); }
    });
    var ask = function (delay) {
      setTimeout(function () {
        fetch(waitURL, { method: "POST", body: body, credentials: "same-origin", cache: "no-store" })
          .then(function (response) { return response.ok ? response.json() : { state: "error" }; })
          .then(function (answer) {
            if (answer.state === "pending") { ask(0); } else if (answer.state === "approved") { send(); } else { form.submit(); }
          })
          .catch(function () { ask(2000); });
      }, delay);
    };
    ask(0);
  }

  // The remembered page: signs the challenge with this browser's key and posts it; without the
  // key (another browser, cleared storage) it asks for the phone instead.
  var remembered = document.getElementById("remembered-form");
  if (remembered) {
    var status = document.getElementById("status");
    var name = remembered.getAttribute("data-key-name");
    var challenge = remembered.querySelector("input[name=challenge]").value;
    var signatureField = remembered.querySelector("input[name=signature]");
    var toPhone = function () {
      if (status) { status.textContent = "This browser does not hold its key: asking your phone."; }
      var push = document.createElement("input");
      push.type = "hidden";
      push.name = "push";
      push.value = "yes";
      remembered.appendChild(push);
      remembered.submit();
    };
    keyStore("readonly", function (store) { return store.get(name); })
      .then(function (key) {
        if (!key) { toPhone(); return; }
        var data = new TextEncoder().encode("countersign-remembered-browser:" + challenge);
        return window.crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, key, data).then(function (signature) {
          signatureField.value = base64url(signature);
          remembered.submit();
        });
      })
      .catch(toPhone);
  }
})();
