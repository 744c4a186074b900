/// The account pages' templates, styles and scripts, merged into `PageTemplates` and
/// `PageAssets`. Like the sign-in's, every `{{value}}` is HTML-escaped by the engine, and each
/// page fills the `content` block of `layout`. Every form posts the session's CSRF token.
enum AccountTemplates {
    static let all: [String: String] = [
        "account": account, "account-remove": remove, "account-enroll": enroll, "account-reported": reported,
        "account-error": error, "landing": LandingPage.template,
    ]
    static let stylesheet = AccountAssets.stylesheet
    static let enrollScriptName = "account-enroll.js"
    static let scripts: [String: (type: String, body: String)] = [
        enrollScriptName: ("text/javascript; charset=utf-8", AccountAssets.enrollScript),
    ]

    static let account = """
        {{<layout}}{{$content}}
        <div class="account">
        <h1>Your account</h1>
        <p class="lead">Signed in as <strong id="username">{{#displayName}}{{displayName}} ({{username}}){{/displayName}}{{^displayName}}{{username}}{{/displayName}}</strong></p>
        {{#requestsPausedUntil}}<p class="notice" id="paused" role="status">New sign-in requests for you are refused until {{requestsPausedUntil}}, because a request was reported as not requested.</p>{{/requestsPausedUntil}}
        <section aria-labelledby="phones-heading">
        <h2 id="phones-heading">Your phones</h2>
        {{#devices}}
        <article class="device" id="device-{{id}}">
        <h3>{{name}}</h3>
        <dl>
        <dt>Platform</dt><dd>{{platform}}</dd>
        <dt>Factors</dt><dd>{{factors}}</dd>
        <dt>Enrolled</dt><dd>{{enrolledAt}}</dd>
        <dt>Last used</dt><dd>{{#lastUsedAt}}{{lastUsedAt}}{{/lastUsedAt}}{{^lastUsedAt}}not yet{{/lastUsedAt}}</dd>
        <dt>Notifications</dt><dd{{^pushValid}} class="warning"{{/pushValid}}>{{push}}</dd>
        </dl>
        <form method="post" action="{{base}}/account/devices/{{id}}/rename" class="rename" novalidate>
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="name-{{id}}">Name</label>
        <div class="row">
        <input id="name-{{id}}" name="name" type="text" autocomplete="off" value="{{nameInput}}"{{#nameError}} aria-invalid="true" aria-describedby="name-error-{{id}}"{{/nameError}} required>
        <button type="submit" class="secondary" id="rename-{{id}}">Rename</button>
        </div>
        {{#nameError}}<p class="field-error" id="name-error-{{id}}">{{nameError}}</p>{{/nameError}}
        </form>
        <form method="post" action="{{base}}/account/devices/{{id}}/remove">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" class="danger" id="remove-{{id}}">Remove this phone</button>
        </form>
        </article>
        {{/devices}}
        {{^devices}}<p id="no-phones">No phone is enrolled: you cannot sign in until you enroll one.</p>{{/devices}}
        <form method="post" action="{{base}}/account/enroll">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" id="enroll">Enroll a new phone</button>
        </form>
        </section>
        {{#passkeys}}<section aria-labelledby="passkeys-heading">
        <h2 id="passkeys-heading">Your passkeys</h2>
        {{#items}}
        <article class="device passkey" id="passkey-{{id}}">
        <h3>{{name}}</h3>
        <dl>
        <dt>Kind</dt><dd>{{kind}}</dd>
        <dt>Added</dt><dd>{{createdAt}}</dd>
        <dt>Last used</dt><dd>{{#lastUsedAt}}{{lastUsedAt}}{{/lastUsedAt}}{{^lastUsedAt}}not yet{{/lastUsedAt}}</dd>
        {{#cloneWarning}}<dt>Warning</dt><dd class="warning">Its signature counter went backwards on {{cloneWarning}}: it may have been copied. Remove it if you do not recognise this.</dd>{{/cloneWarning}}
        </dl>
        <form method="post" action="{{base}}/account/passkeys/{{id}}/rename" class="rename" novalidate>
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="passkey-name-{{id}}">Name</label>
        <div class="row">
        <input id="passkey-name-{{id}}" name="name" type="text" autocomplete="off" value="{{nameInput}}"{{#nameError}} aria-invalid="true" aria-describedby="passkey-name-error-{{id}}"{{/nameError}} required>
        <button type="submit" class="secondary" id="rename-passkey-{{id}}">Rename</button>
        </div>
        {{#nameError}}<p class="field-error" id="passkey-name-error-{{id}}">{{nameError}}</p>{{/nameError}}
        </form>
        <form method="post" action="{{base}}/account/passkeys/{{id}}/remove">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" class="danger" id="remove-passkey-{{id}}">Remove this passkey</button>
        </form>
        </article>
        {{/items}}
        {{^items}}<p id="no-passkeys">No passkey yet. A passkey signs you in with your fingerprint, face or screen lock, without a request to your phone.</p>{{/items}}
        <div id="passkey-add" data-options="{{base}}/account/passkeys/options" data-finish="{{base}}/account/passkeys" data-csrf="{{csrf}}">
        <label for="passkey-new-name">Name for a new passkey (optional)</label>
        <input id="passkey-new-name" name="name" type="text" autocomplete="off" maxlength="64">
        <button type="button" id="add-passkey">Add a passkey</button>
        <p class="field-error" id="passkey-add-error" role="alert" hidden></p>
        </div>
        </section>{{/passkeys}}
        <section aria-labelledby="activity-heading">
        <h2 id="activity-heading">Recent activity</h2>
        <ol class="activity">
        {{#activity}}<li id="event-{{id}}">
        <p><strong>{{label}}</strong> <time datetime="{{timestamp}}">{{time}}</time></p>
        {{#message}}<p class="message">“{{message}}”</p>{{/message}}
        {{#denial}}<p class="denial">{{denial}}</p>{{/denial}}
        {{#client}}<p class="meta">{{client}}</p>{{/client}}
        {{#ipAddress}}<p class="meta">from {{ipAddress}}</p>{{/ipAddress}}
        {{#reportableApproval}}<form method="post" action="{{base}}/account/approvals/{{reportableApproval}}/not-me" class="not-me">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" class="link" id="not-me-{{reportableApproval}}">This wasn't me</button>
        </form>{{/reportableApproval}}
        {{#reported}}<p class="meta reported">Reported as not requested</p>{{/reported}}
        </li>{{/activity}}
        </ol>
        {{^activity}}<p id="no-activity">Nothing recorded yet.</p>{{/activity}}
        </section>
        <form method="post" action="{{base}}/logout" class="sign-out">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" class="link" id="sign-out">Sign out</button>
        </form>
        </div>
        {{/content}}{{/layout}}
        """

    static let remove = """
        {{<layout}}{{$content}}
        <h1>Remove your only phone?</h1>
        <p class="lead">This is your only phone; after removing it you cannot sign in until you enroll another.</p>
        <p>Phone: <strong>{{deviceName}}</strong></p>
        <form method="post" action="{{base}}/account/devices/{{deviceID}}/remove">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="confirm" value="yes">
        <button type="submit" class="danger" id="confirm-remove">Remove it</button>
        </form>
        <p><a class="button secondary" id="keep" href="{{base}}/account">Keep it</a></p>
        {{/content}}{{/layout}}
        """

    static let enroll = """
        {{<layout}}{{$content}}
        <h1>Enroll a new phone</h1>
        <p class="lead">Open the Countersign app on the new phone and scan this code.</p>
        <img class="qr" id="qr" src="{{qrImage}}" alt="The QR code that enrolls a phone">
        <p>On the new phone itself, <a href="{{enrollmentURI}}" id="open-in-app">open the enrollment link</a>, or enter it in the app:</p>
        <p class="uri"><code id="enrollment-uri">{{enrollmentURI}}</code></p>
        <p class="status" id="status" role="status" aria-live="polite">Waiting for the phone…</p>
        <form id="enroll-wait" method="post" action="{{base}}/account/enroll/wait" data-done="{{base}}/account" hidden>
        <input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="ticket" value="{{ticket}}">
        </form>
        <p><a class="button secondary" id="done" href="{{base}}/account">Done</a></p>
        <p class="hint">The code works once, until {{expiresAt}}. Whoever scans it can enroll a phone as you: show it to nobody else.</p>
        {{/content}}{{/layout}}
        """

    static let reported = """
        {{<layout}}{{$content}}
        <h1 id="outcome" data-outcome="reported">{{heading}}</h1>
        <p class="lead">{{message}}</p>
        <p><a class="button" id="back" href="{{base}}/account">Back to your account</a></p>
        {{/content}}{{/layout}}
        """

    static let error = """
        {{<layout}}{{$content}}
        <h1 id="outcome" data-outcome="error">{{heading}}</h1>
        <p class="lead">{{message}}</p>
        <p><a class="button secondary" id="back" href="{{base}}/account">Back to your account</a></p>
        <p class="hint">Error code: <code>{{code}}</code></p>
        {{/content}}{{/layout}}
        """
}
