(function () {
  "use strict";
  function fromBase64URL(text) {
    var base64 = text.replace(/-/g, "+").replace(/_/g, "/");
    var binary = atob(base64 + "===".slice((base64.length + 3) % 4));
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) { bytes[i] = binary.charCodeAt(i); }
    return bytes.buffer;
  }
  function toBase64URL(buffer) {
    var bytes = new Uint8Array(buffer), binary = "";
    for (var i = 0; i < bytes.length; i++) { binary += String.fromCharCode(bytes[i]); }
    return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  function descriptors(list) {
    return (list || []).map(function (item) {
      return { type: item.type, id: fromBase64URL(item.id), transports: item.transports };
    });
  }
  function requestOptions(json) {
    if (PublicKeyCredential.parseRequestOptionsFromJSON) { return PublicKeyCredential.parseRequestOptionsFromJSON(json); }
    var options = Object.assign({}, json);
    options.challenge = fromBase64URL(json.challenge);
    options.allowCredentials = descriptors(json.allowCredentials);
    return options;
  }
  function creationOptions(json) {
    if (PublicKeyCredential.parseCreationOptionsFromJSON) { return PublicKeyCredential.parseCreationOptionsFromJSON(json); }
    var options = Object.assign({}, json);
    options.challenge = fromBase64URL(json.challenge);
    options.user = Object.assign({}, json.user, { id: fromBase64URL(json.user.id) });
    options.excludeCredentials = descriptors(json.excludeCredentials);
    return options;
  }
  function credentialJSON(credential) {
    if (typeof credential.toJSON === "function") { return credential.toJSON(); }
    var response = credential.response, json = {
      id: credential.id, rawId: toBase64URL(credential.rawId), type: credential.type,
      authenticatorAttachment: credential.authenticatorAttachment || undefined,
      clientExtensionResults: credential.getClientExtensionResults(), response: {
        clientDataJSON: toBase64URL(response.clientDataJSON)
      }
    };
    if (response.attestationObject) {
      json.response.attestationObject = toBase64URL(response.attestationObject);
      json.response.transports = response.getTransports ? response.getTransports() : [];
    } else {
      json.response.authenticatorData = toBase64URL(response.authenticatorData);
      json.response.signature = toBase64URL(response.signature);
      if (response.userHandle) { json.response.userHandle = toBase64URL(response.userHandle); }
    }
    return json;
  }
  function post(url, body, json) {
    return fetch(url, {
      method: "POST", credentials: "same-origin", cache: "no-store",
      headers: json ? { "Content-Type": "application/json" } : undefined,
      body: json ? JSON.stringify(body) : new URLSearchParams(body)
    }).then(function (response) {
      return response.json().then(function (answer) {
        if (!response.ok && answer.redirect) {
          window.location.assign(answer.redirect);
          throw new DOMException("leaving the page", "AbortError");
        }
        if (!response.ok) { throw new Error(answer.error_description || "The server refused the passkey."); }
        return answer;
      });
    });
  }
  var needsVerification = "This sign-in needs your passkey to verify it is you, with your fingerprint, face, PIN "
    + "or screen lock; the check was cancelled or did not succeed. Try again.";
  function explain(error) {
    if (!error || error.name === "AbortError") { return null; }
    if (error.name === "NotAllowedError") { return "The passkey request was cancelled or timed out. Try again."; }
    if (error.name === "InvalidStateError") { return "This passkey is already registered."; }
    if (error.name === "SecurityError") {
      // What a browser says at an IP address ("This is an invalid domain") or at an
      // address that is not the relying party's.
      var here = location.hostname;
      if (here === "127.0.0.1" || here === "[::1]") {
        return "Passkeys work only at a domain name, not at an address like " + here
          + ". Open this page at " + location.href.replace(here, "localhost") + " to use one.";
      }
      return "Passkeys cannot be used at this address (" + here + "): it is not the one this server's "
        + "passkeys belong to. Open the page at the server's own address.";
    }
    return error.message || "The passkey could not be used.";
  }
  function setUp(box, run) {
    var button = box.querySelector("button"), line = box.querySelector(".field-error");
    function show(message) { if (message) { line.textContent = message; line.hidden = false; } }
    if (!window.PublicKeyCredential || !navigator.credentials) {
      button.hidden = true;
      show("This browser cannot use passkeys.");
      return;
    }
    button.addEventListener("click", function () {
      line.hidden = true;
      button.disabled = true;
      run(null).catch(function (error) { show(explain(error)); })
        .then(function () { button.disabled = false; });
    });
    return show;
  }

  var signIn = document.getElementById("passkey");
  if (signIn) {
    var pending = null;
    var runSignIn = function (mediation) {
      if (pending) { pending.abort(); pending = null; }
      var fields = { attempt: signIn.getAttribute("data-attempt") };
      return post(signIn.getAttribute("data-options"), fields, false).then(function (answer) {
        var request = { publicKey: requestOptions(answer.publicKey) };
        if (mediation) { pending = new AbortController(); request.mediation = mediation; request.signal = pending.signal; }
        return navigator.credentials.get(request).then(function (credential) {
          if (!credential) { return; }
          return post(signIn.getAttribute("data-finish"), {
            attempt: fields.attempt, ceremony: answer.ceremony, credential: credentialJSON(credential)
          }, true).then(function (done) { window.location.assign(done.redirect); });
        }, function (error) {
          // A browser refuses alike whether the person cancelled or the device could
          // not verify them; where verification is required, say that it is.
          var verify = answer.publicKey.userVerification === "required" && error && error.name === "NotAllowedError";
          throw verify ? new Error(needsVerification) : error;
        });
      });
    };
    var show = setUp(signIn, runSignIn);
    if (show && signIn.getAttribute("data-conditional") === "true" && PublicKeyCredential.isConditionalMediationAvailable) {
      PublicKeyCredential.isConditionalMediationAvailable().then(function (available) {
        // Autofill runs unasked: what stops it is said when the person presses the button,
        // not on the page they just opened.
        if (available) { runSignIn("conditional").catch(function () {}); }
      });
    }
  }

  var add = document.getElementById("passkey-add");
  if (add) {
    setUp(add, function () {
      var fields = { csrf: add.getAttribute("data-csrf"), name: (add.querySelector("input[name=name]") || {}).value || "" };
      return post(add.getAttribute("data-options"), fields, false).then(function (answer) {
        return navigator.credentials.create({ publicKey: creationOptions(answer.publicKey) }).then(function (credential) {
          return post(add.getAttribute("data-finish"), {
            csrf: fields.csrf, ceremony: answer.ceremony, credential: credentialJSON(credential)
          }, true).then(function (done) { window.location.assign(done.redirect); });
        });
      });
    });
  }
})();