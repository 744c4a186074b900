/// The console's templates and stylesheet, merged into `PageTemplates` and `PageAssets`. As on
/// every hosted page, `{{value}}` is HTML-escaped by the engine, no script is inline, and every
/// form that changes something posts the session's CSRF token. Pages fill the `content` block
/// of `console-layout`, which is wide where the screen is and one column on a phone.
enum ConsoleTemplates {
    static let all: [String: String] = [
        "console-layout": layout, "console-home": home, "console-users": users, "console-user": user,
        "console-message": message, "console-signed-out": signedOut, "console-audit": audit,
        "console-clients": clients, "console-client": client, "console-client-form": clientForm, "console-push": push,
        "console-devices": devices, "console-policies": policies, "console-request": request,
    ]

    static let layout = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <title>{{title}} · {{tenantName}} · Countersign console</title>
        <link rel="stylesheet" href="/assets/console.css">
        </head>
        <body class="console">
        <header class="bar">
        <a class="brand" href="{{base}}/console">{{tenantName}} console</a>
        {{#signedIn}}<nav aria-label="Console">
        {{#nav}}<a href="{{href}}"{{#current}} aria-current="page"{{/current}}>{{title}}</a>
        {{/nav}}        </nav>
        <form method="post" action="{{base}}/console/sign-out" class="sign-out">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <span class="who">{{username}}</span> <button type="submit" class="link" id="sign-out">Sign out</button>
        </form>{{/signedIn}}
        </header>
        <main class="page">
        {{$content}}{{/content}}
        </main>
        </body>
        </html>

        """

    static let devices = """
        {{<console-layout}}{{$content}}
        <h1>Devices</h1>
        {{#notice}}<p class="notice" role="status" id="notice">{{notice}}</p>{{/notice}}
        {{#error}}<p class="field-error" role="alert" id="action-error">{{error}}</p>{{/error}}
        <form method="get" action="{{base}}/console/devices" class="search">
        <label for="push-filter">Show</label>
        <div class="row"><select id="push-filter" name="push">
        {{#filters}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/filters}}
        </select><button type="submit" class="secondary" id="filter">Show</button></div>
        </form>
        <table id="devices">
        <thead><tr><th scope="col">Device</th><th scope="col">User</th><th scope="col">Platform</th><th scope="col">Push</th><th scope="col">Factors</th><th scope="col">Last seen</th><th scope="col">Enrolled</th><th scope="col"></th></tr></thead>
        <tbody>
        {{#items}}<tr id="device-{{id}}"><td>{{name}}</td><td><a href="{{base}}/console/users/{{userID}}">{{userName}}</a></td><td>{{platform}}</td>
        <td>{{push}}{{#pushProblem}} <strong class="problem">{{pushProblem}}</strong>{{/pushProblem}}</td><td>{{factors}}</td><td>{{lastSeen}}</td><td>{{enrolled}}</td>
        <td><form method="post" action="{{base}}/console/devices/{{id}}/remove"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="push" value="{{pushFilter}}"><button type="submit" class="link danger" id="remove-device-{{id}}">Deregister</button></form></td></tr>
        {{/items}}
        </tbody>
        </table>
        {{^items}}<p id="no-devices">No device{{#filtered}} of this kind{{/filtered}} is enrolled.</p>{{/items}}
        {{#next}}<p><a href="{{base}}/console/devices?{{next}}" id="next-page">Next page</a></p>{{/next}}
        {{/content}}{{/console-layout}}
        """

    static let policies = """
        {{<console-layout}}{{$content}}
        <h1>Policies</h1>
        {{#notice}}<p class="notice" role="status" id="notice">{{notice}}</p>{{/notice}}
        {{#error}}<p class="field-error" role="alert" id="action-error">{{error}}</p>{{/error}}
        <section aria-labelledby="policy-heading" class="panel">
        <h2 id="policy-heading">How users approve</h2>
        <p class="hint">A field left empty takes its default. Passkey settings are kept as they are (<code>countersign admin policy set --passkey-…</code>).</p>
        <form method="post" action="{{base}}/console/policies" novalidate>
        <input type="hidden" name="csrf" value="{{csrf}}">
        {{#selects}}<label for="{{name}}">{{label}}</label>
        <select id="{{name}}" name="{{name}}"{{#selectError}} aria-invalid="true" aria-describedby="{{name}}-error"{{/selectError}}>
        {{#options}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/options}}
        </select>
        <p class="hint">{{hint}}</p>
        {{#selectError}}<p class="field-error" id="{{name}}-error">{{selectError}}</p>{{/selectError}}
        {{/selects}}
        {{#numbers}}<label for="{{name}}">{{label}}</label>
        <input id="{{name}}" name="{{name}}" type="text" inputmode="numeric" autocomplete="off" value="{{value}}"{{#numberError}} aria-invalid="true" aria-describedby="{{name}}-error"{{/numberError}}>
        <p class="hint">{{hint}}</p>
        {{#numberError}}<p class="field-error" id="{{name}}-error">{{numberError}}</p>{{/numberError}}
        {{/numbers}}
        <fieldset><legend>Factors and delivery</legend>
        {{#switches}}<label class="check"><input type="checkbox" name="{{name}}" id="{{name}}"{{#on}} checked{{/on}}> {{label}}</label>
        {{/switches}}
        </fieldset>
        {{#policyError}}<p class="field-error" id="policy-error">{{policyError}}</p>{{/policyError}}
        <button type="submit" id="save-policy">Save policy</button>
        </form>
        </section>
        {{#webhooks}}<section aria-labelledby="webhook-{{purpose}}-heading" class="panel" id="webhook-{{purpose}}">
        <h2 id="webhook-{{purpose}}-heading">Webhook: {{title}}</h2>
        <p class="hint">{{explanation}}</p>
        {{#isSet}}<p>Set{{#updatedAt}}, last changed {{updatedAt}}{{/updatedAt}}.</p>{{/isSet}}
        {{^isSet}}<p id="webhook-{{purpose}}-unset">Not set.</p>{{/isSet}}
        {{#secret}}<p class="notice" id="webhook-{{purpose}}-secret">Its signing secret, shown this once: <code>{{secret}}</code></p>{{/secret}}
        <form method="post" action="{{base}}/console/policies/webhooks/{{purpose}}" novalidate>
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="url-{{purpose}}">URL</label>
        <input id="url-{{purpose}}" name="url" type="url" autocomplete="off" spellcheck="false" value="{{url}}"{{#urlError}} aria-invalid="true" aria-describedby="url-{{purpose}}-error"{{/urlError}}>
        {{#urlError}}<p class="field-error" id="url-{{purpose}}-error">{{urlError}}</p>{{/urlError}}
        <div class="actions"><button type="submit" id="save-webhook-{{purpose}}">Save</button>
        {{#isSet}}<button type="submit" class="secondary" name="rotate_secret" value="yes" id="rotate-webhook-{{purpose}}">Save with a new secret</button>{{/isSet}}</div>
        </form>
        {{#isSet}}<form method="post" action="{{base}}/console/policies/webhooks/{{purpose}}/delete">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" class="link danger" id="remove-webhook-{{purpose}}">Remove this webhook</button>
        </form>{{/isSet}}
        </section>
        {{/webhooks}}
        <section aria-labelledby="deliveries-heading" class="panel">
        <h2 id="deliveries-heading">Recent events sent</h2>
        <table id="webhook-deliveries">
        <thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Queued</th></tr></thead>
        <tbody>
        {{#deliveries}}<tr id="delivery-{{id}}"><td>{{event}}</td><td>{{#failed}}<strong class="problem">{{status}}</strong>{{/failed}}{{^failed}}{{status}}{{/failed}}{{#lastError}} <span class="hint">{{lastError}}</span>{{/lastError}}</td><td>{{attempts}}</td><td>{{createdAt}}</td></tr>
        {{/deliveries}}
        </tbody>
        </table>
        {{^deliveries}}<p id="no-deliveries">No event has been sent.</p>{{/deliveries}}
        </section>
        {{/content}}{{/console-layout}}
        """

    static let home = """
        {{<console-layout}}{{$content}}
        <h1>Dashboard</h1>
        <p class="lead">Signed in as <strong>{{username}}</strong>, {{roleName}}.</p>
        <ul class="tiles">
        <li><a href="{{base}}/console/users"><strong id="user-count">{{userCount}}</strong> users</a></li>
        </ul>
        <h2>The last 24 hours</h2>
        <div class="charts">
        {{#charts}}<figure class="chart" id="chart-{{id}}">
        <figcaption>{{title}}: <strong id="total-{{id}}">{{total}}</strong> <span class="hint">(at most {{maximum}} in an hour)</span></figcaption>
        <svg viewBox="0 0 {{width}} {{height}}" width="100%" role="img" aria-label="{{title}} per hour, {{firstHour}} to {{lastHour}}">
        <line x1="0" y1="{{axisY}}" x2="{{width}}" y2="{{axisY}}" stroke="currentColor" stroke-opacity="0.3"/>
        {{#bars}}<rect x="{{x}}" y="{{y}}" width="{{width}}" height="{{height}}" fill="#1f5eff"><title>{{label}}</title></rect>{{/bars}}
        </svg>
        <p class="hint axis"><span>{{firstHour}}</span><span>{{lastHour}}</span></p>
        </figure>
        {{/charts}}
        </div>
        {{/content}}{{/console-layout}}
        """

    static let users = """
        {{<console-layout}}{{$content}}
        <h1>Users</h1>
        <form method="get" action="{{base}}/console/users" class="search" role="search">
        <label for="q">Find by username</label>
        <div class="row"><input id="q" name="q" type="search" value="{{query}}" autocomplete="off"><button type="submit" class="secondary" id="search">Search</button></div>
        </form>
        <table id="users">
        <thead><tr><th scope="col">Username</th><th scope="col">Name</th><th scope="col">Status</th></tr></thead>
        <tbody>
        {{#items}}<tr><td><a href="{{base}}/console/users/{{id}}" id="user-{{username}}">{{username}}</a></td><td>{{displayName}}</td><td>{{status}}</td></tr>
        {{/items}}
        </tbody>
        </table>
        {{^items}}<p id="no-users">No user{{#query}} starts with “{{query}}”{{/query}}.</p>{{/items}}
        {{#next}}<p><a href="{{base}}/console/users?{{next}}" id="next-page">Next page</a></p>{{/next}}
        <section aria-labelledby="create-heading" class="panel">
        <h2 id="create-heading">Create a user</h2>
        <form method="post" action="{{base}}/console/users" novalidate>
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="username">Username</label>
        <input id="username" name="username" type="text" autocomplete="off" autocapitalize="none" spellcheck="false" value="{{formUsername}}"{{#usernameError}} aria-invalid="true" aria-describedby="username-error"{{/usernameError}} required>
        {{#usernameError}}<p class="field-error" id="username-error">{{usernameError}}</p>{{/usernameError}}
        <label for="display_name">Display name (optional)</label>
        <input id="display_name" name="display_name" type="text" autocomplete="off" value="{{formDisplayName}}"{{#displayNameError}} aria-invalid="true" aria-describedby="display-name-error"{{/displayNameError}}>
        {{#displayNameError}}<p class="field-error" id="display-name-error">{{displayNameError}}</p>{{/displayNameError}}
        {{#formError}}<p class="field-error" id="create-error">{{formError}}</p>{{/formError}}
        <button type="submit" id="create-user">Create user</button>
        </form>
        </section>
        {{/content}}{{/console-layout}}
        """

    static let user = """
        {{<console-layout}}{{$content}}
        <p><a href="{{base}}/console/users">← Users</a></p>
        <h1 id="user-heading">{{user.username}}</h1>
        {{#notice}}<p class="notice" role="status" id="notice">{{notice}}</p>{{/notice}}
        {{#error}}<p class="field-error" role="alert" id="action-error">{{error}}</p>{{/error}}
        <dl class="facts">
        <dt>Name</dt><dd>{{user.displayName}}</dd>
        <dt>Status</dt><dd id="status">{{user.status}}</dd>
        <dt>Created</dt><dd>{{user.createdAt}}</dd>
        <dt>ID</dt><dd><code>{{user.id}}</code></dd>
        </dl>
        <div class="actions">
        <form method="post" action="{{base}}/console/users/{{user.id}}/status">
        <input type="hidden" name="csrf" value="{{csrf}}">
        {{#user.active}}<input type="hidden" name="status" value="disabled"><button type="submit" class="secondary" id="disable">Disable</button>{{/user.active}}
        {{^user.active}}<input type="hidden" name="status" value="active"><button type="submit" class="secondary" id="enable">Enable</button>{{/user.active}}
        </form>
        <form method="post" action="{{base}}/console/users/{{user.id}}/delete">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label class="check"><input type="checkbox" name="confirm" value="yes" id="confirm-delete"> Delete {{user.username}}, with every device and passkey</label>
        {{#confirmError}}<p class="field-error" id="confirm-error">{{confirmError}}</p>{{/confirmError}}
        <button type="submit" class="danger" id="delete">Delete user</button>
        </form>
        </div>
        <section aria-labelledby="invitation-heading" class="panel">
        <h2 id="invitation-heading">Enroll a phone</h2>
        {{#invitation}}<div id="invitation">
        <p>Scan with the Countersign app, or send the person this link. It works once, until {{expiresAt}}.</p>
        <img src="data:image/png;base64,{{qrPNG}}" alt="QR code of the enrollment link" width="240" height="240" id="invitation-qr">
        <p><a href="{{invitationURL}}" id="invitation-url">{{invitationURL}}</a></p>
        <p class="hint">Enrollment link: <code id="enrollment-uri">{{enrollmentURI}}</code></p>
        </div>{{/invitation}}
        <form method="post" action="{{base}}/console/users/{{user.id}}/invitations">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" id="create-invitation">Create an invitation</button>
        </form>
        </section>
        <section aria-labelledby="devices-heading" class="panel">
        <h2 id="devices-heading">Devices</h2>
        <table id="devices">
        <thead><tr><th scope="col">Name</th><th scope="col">Platform</th><th scope="col">Push</th><th scope="col">Last seen</th><th scope="col"></th></tr></thead>
        <tbody>
        {{#devices}}<tr id="device-{{id}}"><td>{{name}}</td><td>{{platform}}</td><td>{{push}}</td><td>{{lastSeen}}</td>
        <td><form method="post" action="{{base}}/console/users/{{userID}}/devices/{{id}}/remove"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="link danger" id="remove-device-{{id}}">Deregister</button></form></td></tr>
        {{/devices}}
        </tbody>
        </table>
        {{^devices}}<p id="no-devices">No device is enrolled.</p>{{/devices}}
        </section>
        <section aria-labelledby="passkeys-heading" class="panel">
        <h2 id="passkeys-heading">Passkeys</h2>
        <table id="passkeys">
        <thead><tr><th scope="col">Name</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col"></th></tr></thead>
        <tbody>
        {{#passkeys}}<tr id="passkey-{{id}}"><td>{{name}}</td><td>{{createdAt}}</td><td>{{lastUsed}}</td>
        <td><form method="post" action="{{base}}/console/users/{{userID}}/passkeys/{{id}}/remove"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="link danger" id="remove-passkey-{{id}}">Remove</button></form></td></tr>
        {{/passkeys}}
        </tbody>
        </table>
        {{^passkeys}}<p id="no-passkeys">No passkey is registered.</p>{{/passkeys}}
        </section>
        <section aria-labelledby="factors-heading" class="panel">
        <h2 id="factors-heading">Factors and locks</h2>
        {{#user.suppressedUntil}}<p id="suppressed">Requests are paused until {{user.suppressedUntil}}: the user answered “I did not request this”.</p>
        <form method="post" action="{{base}}/console/users/{{user.id}}/request-suppression/delete">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" class="secondary" id="lift-suppression">Let requests through again</button>
        </form>{{/user.suppressedUntil}}
        {{#user.totpLockedUntil}}<p id="totp-locked">One-time codes are locked until {{user.totpLockedUntil}} after too many wrong ones; resetting the factors lifts the lock.</p>{{/user.totpLockedUntil}}
        <form method="post" action="{{base}}/console/users/{{user.id}}/user-code" novalidate>
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="user_code">User code (CIBA <code>user_code</code>): <span id="user-code-state">{{#user.userCodeSet}}set{{/user.userCodeSet}}{{^user.userCodeSet}}not set{{/user.userCodeSet}}</span>{{#user.userCodeLockedUntil}}, locked until {{user.userCodeLockedUntil}}{{/user.userCodeLockedUntil}}</label>
        <input id="user_code" name="user_code" type="password" autocomplete="off"{{#userCodeError}} aria-invalid="true" aria-describedby="user-code-error"{{/userCodeError}}>
        <p class="hint">4 to 64 characters; never shown again. Setting it lifts a lock.</p>
        {{#userCodeError}}<p class="field-error" id="user-code-error">{{userCodeError}}</p>{{/userCodeError}}
        <div class="actions"><button type="submit" class="secondary" id="set-user-code">Set code</button>
        {{#user.userCodeSet}}<button type="submit" class="link danger" name="remove" value="yes" id="remove-user-code">Remove code</button>{{/user.userCodeSet}}</div>
        </form>
        <form method="post" action="{{base}}/console/users/{{user.id}}/factor-reset">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label class="check"><input type="checkbox" name="confirm" value="yes" id="confirm-reset"> Deregister every device and remove every passkey of {{user.username}}, revoke their unused invitations and sign them out, so they enroll again</label>
        {{#resetConfirmError}}<p class="field-error" id="reset-confirm-error">{{resetConfirmError}}</p>{{/resetConfirmError}}
        <button type="submit" class="danger" id="reset-factors">Reset factors</button>
        </form>
        </section>
        <section aria-labelledby="role-heading" class="panel">
        <h2 id="role-heading">Console access</h2>
        <p id="console-role">{{#consoleRole}}{{user.username}} is a <strong>{{name}}</strong> of the console, since {{grantedAt}}.{{/consoleRole}}{{^consoleRole}}{{user.username}} cannot sign in to the console.{{/consoleRole}}</p>
        <form method="post" action="{{base}}/console/users/{{user.id}}/console-role" novalidate>
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="role">Console role</label>
        <select id="role" name="role"{{#roleError}} aria-invalid="true" aria-describedby="role-error"{{/roleError}}>
        {{#roleOptions}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/roleOptions}}
        </select>
        <p class="hint">A tenant administrator manages this tenant; a system administrator, every tenant. Granting a role needs a session holding its rights.</p>
        {{#roleError}}<p class="field-error" id="role-error">{{roleError}}</p>{{/roleError}}
        <button type="submit" class="secondary" id="save-role">Save role</button>
        </form>
        </section>
        {{/content}}{{/console-layout}}
        """

    static let audit = """
        {{<console-layout}}{{$content}}
        <h1>Audit log</h1>
        <form method="get" action="{{base}}/console/audit" class="filters" id="audit-filter">
        <div class="grid">
        {{#filters}}<div><label for="{{name}}">{{label}}</label><input id="{{name}}" name="{{name}}" type="text" autocomplete="off" value="{{value}}"></div>
        {{/filters}}
        <div><label for="since">From (UTC)</label><input id="since" name="since" type="datetime-local" value="{{since}}"></div>
        <div><label for="until">Until (UTC)</label><input id="until" name="until" type="datetime-local" value="{{until}}"></div>
        </div>
        {{#error}}<p class="field-error" role="alert" id="filter-error">{{error}}</p>{{/error}}
        <button type="submit" id="filter">Filter</button>
        <a class="button secondary" id="export-csv" href="{{base}}/console/audit/export?format=csv&amp;{{exportQuery}}">Export CSV</a>
        <a class="button secondary" id="export-jsonl" href="{{base}}/console/audit/export?format=jsonl&amp;{{exportQuery}}">Export JSON lines</a>
        </form>
        <table id="events">
        <thead><tr><th scope="col">When</th><th scope="col">Action</th><th scope="col">Actor</th><th scope="col">Target</th><th scope="col">Details</th></tr></thead>
        <tbody>
        {{#events}}<tr><td class="when"><span>{{date}}</span> <span>{{time}}</span></td><td class="action"><code>{{action}}</code></td>
        <td>{{#actor}}{{#page}}<a class="actor" href="{{base}}/console/{{page}}" title="{{reference}}">{{label}}</a>{{/page}}{{^page}}<span title="{{reference}}">{{label}}</span>{{/page}}{{#kind}} <span class="hint">{{kind}}</span>{{/kind}}{{/actor}}</td>
        <td>{{#target}}{{#kind}}<span class="hint">{{kind}}</span> {{/kind}}{{#page}}<a class="target" href="{{base}}/console/{{page}}" title="{{reference}}">{{label}}</a>{{/page}}{{^page}}<span title="{{reference}}">{{label}}</span>{{/page}}{{/target}}</td>
        <td class="details">{{#details}}<span class="detail"><span class="hint">{{name}}</span> {{value}}</span>{{/details}}</td></tr>
        {{/events}}
        </tbody>
        </table>
        {{^events}}<p id="no-events">No event matches.</p>{{/events}}
        {{#next}}<p><a href="{{base}}/console/audit?{{next}}" id="next-page">Older events</a></p>{{/next}}
        {{/content}}{{/console-layout}}
        """

    /// The fields of a client, shared by the register and edit forms (a partial).
    static let clientForm = """
        {{#form}}
        <label for="name">Name</label>
        <input id="name" name="name" type="text" autocomplete="off" value="{{name}}"{{#nameError}} aria-invalid="true" aria-describedby="name-error"{{/nameError}}>
        {{#nameError}}<p class="field-error" id="name-error">{{nameError}}</p>{{/nameError}}
        <label for="token_delivery_mode">Token delivery (CIBA)</label>
        <select id="token_delivery_mode" name="token_delivery_mode">{{#deliveryModes}}<option{{#selected}} selected{{/selected}}>{{value}}</option>{{/deliveryModes}}</select>
        {{#deliveryError}}<p class="field-error" id="delivery-error">{{deliveryError}}</p>{{/deliveryError}}
        <label for="notification_endpoint">Notification endpoint (ping and push)</label>
        <input id="notification_endpoint" name="notification_endpoint" type="text" autocomplete="off" value="{{notificationEndpoint}}"{{#endpointError}} aria-invalid="true"{{/endpointError}}>
        {{#endpointError}}<p class="field-error" id="endpoint-error">{{endpointError}}</p>{{/endpointError}}
        <label for="token_endpoint_auth_method">Authentication at the token endpoint</label>
        <select id="token_endpoint_auth_method" name="token_endpoint_auth_method">{{#methods}}<option{{#selected}} selected{{/selected}}>{{value}}</option>{{/methods}}</select>
        {{#methodError}}<p class="field-error" id="method-error">{{methodError}}</p>{{/methodError}}
        <label for="redirect_uris">Redirect URIs (one per line)</label>
        <textarea id="redirect_uris" name="redirect_uris" rows="3"{{#redirectError}} aria-invalid="true" aria-describedby="redirect-error"{{/redirectError}}>{{redirectURIs}}</textarea>
        {{#redirectError}}<p class="field-error" id="redirect-error">{{redirectError}}</p>{{/redirectError}}
        <label for="post_logout_redirect_uris">Sign-out redirect URIs (one per line)</label>
        <textarea id="post_logout_redirect_uris" name="post_logout_redirect_uris" rows="2">{{postLogoutRedirectURIs}}</textarea>
        {{#logoutError}}<p class="field-error" id="logout-error">{{logoutError}}</p>{{/logoutError}}
        <label for="authorization_details_types">Authorization detail types (space-separated)</label>
        <input id="authorization_details_types" name="authorization_details_types" type="text" autocomplete="off" value="{{detailTypes}}">
        {{#detailTypesError}}<p class="field-error" id="detail-types-error">{{detailTypesError}}</p>{{/detailTypesError}}
        <label for="jwks">Public keys (JWKS, for private_key_jwt and signed requests)</label>
        <textarea id="jwks" name="jwks" rows="4" class="mono">{{jwks}}</textarea>
        {{#jwksError}}<p class="field-error" id="jwks-error">{{jwksError}}</p>{{/jwksError}}
        {{#error}}<p class="field-error" id="form-error">{{error}}</p>{{/error}}
        {{/form}}
        """

    static let clients = """
        {{<console-layout}}{{$content}}
        <h1>Clients</h1>
        <table id="clients">
        <thead><tr><th scope="col">Name</th><th scope="col">Client ID</th><th scope="col">Delivery</th><th scope="col">Authentication</th></tr></thead>
        <tbody>
        {{#items}}<tr><td><a href="{{base}}/console/clients/{{id}}" id="client-{{id}}">{{name}}</a></td><td><code>{{id}}</code></td><td>{{deliveryMode}}</td><td>{{authenticationMethod}}</td></tr>
        {{/items}}
        </tbody>
        </table>
        {{^items}}<p id="no-clients">No client is registered.</p>{{/items}}
        <section aria-labelledby="register-heading" class="panel">
        <h2 id="register-heading">Register a client</h2>
        <form method="post" action="{{base}}/console/clients" novalidate>
        <input type="hidden" name="csrf" value="{{csrf}}">
        {{>console-client-form}}
        <button type="submit" id="register-client">Register</button>
        </form>
        </section>
        {{/content}}{{/console-layout}}
        """

    static let client = """
        {{<console-layout}}{{$content}}
        <p><a href="{{base}}/console/clients">← Clients</a></p>
        <h1 id="client-heading">{{client.name}}</h1>
        <p>Client ID <code id="client-id">{{client.id}}</code> · registered {{client.createdAt}}</p>
        {{#notice}}<p class="notice" role="status" id="notice">{{notice}}</p>{{/notice}}
        {{#secret}}<div class="panel" id="secret-panel"><p><strong>The client secret, shown only now:</strong></p><p><code id="client-secret">{{secret}}</code></p><p class="hint">Store it in the application's configuration; it cannot be shown again. Make a new one to replace it.</p></div>{{/secret}}
        <section class="panel" aria-labelledby="edit-heading">
        <h2 id="edit-heading">Settings</h2>
        <form method="post" action="{{base}}/console/clients/{{client.id}}" novalidate>
        <input type="hidden" name="csrf" value="{{csrf}}">
        {{>console-client-form}}
        <button type="submit" id="save-client">Save</button>
        </form>
        </section>
        <div class="actions">
        <form method="post" action="{{base}}/console/clients/{{client.id}}/secret">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" class="secondary" id="new-secret">Make a new secret</button>
        </form>
        <form method="post" action="{{base}}/console/clients/{{client.id}}/delete">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label class="check"><input type="checkbox" name="confirm" value="yes" id="confirm-delete"> Delete {{client.name}}</label>
        <button type="submit" class="danger" id="delete-client">Delete client</button>
        </form>
        </div>
        {{/content}}{{/console-layout}}
        """

    static let push = """
        {{<console-layout}}{{$content}}
        <h1>Push credentials</h1>
        {{#notice}}<p class="notice" role="status" id="notice">{{notice}}</p>{{/notice}}
        {{#error}}<p class="field-error" role="alert" id="action-error">{{error}}</p>{{/error}}
        <table id="credentials">
        <thead><tr><th scope="col">Kind</th><th scope="col">Details</th><th scope="col">Sends</th><th scope="col">Updated</th><th scope="col"></th></tr></thead>
        <tbody>
        {{#items}}<tr id="credential-{{kind}}"><td>{{kind}}</td><td>{{detail}}</td><td>{{#active}}<strong>in use</strong>{{/active}}{{^active}}not used{{/active}}</td><td>{{updatedAt}}</td>
        <td><form method="post" action="{{base}}/console/push/{{removal}}/delete"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="link danger" id="remove-{{kind}}">Remove</button></form></td></tr>
        {{/items}}
        </tbody>
        </table>
        {{^items}}<p id="no-credentials">No push credential is set: devices get no notification and look for requests themselves.</p>{{/items}}
        <section class="panel" aria-labelledby="deliveries-heading">
        <h2 id="deliveries-heading">Recent notifications</h2>
        <p>{{#failedOnly}}<a href="{{base}}/console/push" id="show-all">Show all</a>{{/failedOnly}}{{^failedOnly}}<a href="{{base}}/console/push?status=failed" id="show-failed">Show failures only</a>{{/failedOnly}}</p>
        {{#hasDeliveries}}<table id="notifications">
        <thead><tr><th scope="col">Queued</th><th scope="col">Request</th><th scope="col">Device</th><th scope="col">Kind</th><th scope="col">Status</th><th scope="col">Attempts</th></tr></thead>
        <tbody>
        {{#deliveries}}<tr><td>{{createdAt}}</td><td><a href="{{base}}/console/requests/{{requestID}}" class="request-link">{{requestID}}</a></td><td><code>{{deviceID}}</code></td><td>{{provider}} {{kind}}</td>
        <td>{{#failed}}<strong class="problem">failed</strong>{{/failed}}{{^failed}}{{status}}{{/failed}}{{#lastError}} <span class="hint">{{lastError}}</span>{{/lastError}}</td><td>{{attempts}}</td></tr>
        {{/deliveries}}
        </tbody>
        </table>{{/hasDeliveries}}
        {{#older}}<p><a href="{{base}}/console/push?{{older}}" id="older-notifications">Older notifications</a></p>{{/older}}
        {{^hasDeliveries}}<p id="no-notifications">{{#failedOnly}}No notification failed.{{/failedOnly}}{{^failedOnly}}No notification has been sent.{{/failedOnly}}</p>{{/hasDeliveries}}
        </section>
        {{#form}}
        <section class="panel" aria-labelledby="apns-heading">
        <h2 id="apns-heading">APNs token key (.p8)</h2>
        <form method="post" action="{{base}}/console/push/apns-token" enctype="multipart/form-data" novalidate>
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="key_id">Key ID</label><input id="key_id" name="key_id" type="text" autocomplete="off" value="{{keyID}}">
        {{#keyIDError}}<p class="field-error" id="key-id-error">{{keyIDError}}</p>{{/keyIDError}}
        <label for="team_id">Team ID</label><input id="team_id" name="team_id" type="text" autocomplete="off" value="{{teamID}}">
        {{#teamIDError}}<p class="field-error" id="team-id-error">{{teamIDError}}</p>{{/teamIDError}}
        <label for="topic">Bundle ID (topic)</label><input id="topic" name="topic" type="text" autocomplete="off" value="{{topic}}">
        {{#topicError}}<p class="field-error" id="topic-error">{{topicError}}</p>{{/topicError}}
        <label for="environment">Environment</label>
        <select id="environment" name="environment"><option{{^sandbox}} selected{{/sandbox}}>production</option><option{{#sandbox}} selected{{/sandbox}}>sandbox</option></select>
        <label for="private_key_file">The .p8 file</label>
        <input id="private_key_file" name="private_key_file" type="file" accept=".p8,.pem,text/plain">
        <label for="private_key">or its text</label>
        <textarea id="private_key" name="private_key" rows="6" class="mono">{{privateKey}}</textarea>
        {{#privateKeyError}}<p class="field-error" id="private-key-error">{{privateKeyError}}</p>{{/privateKeyError}}
        {{#apnsError}}<p class="field-error" id="apns-error">{{apnsError}}</p>{{/apnsError}}
        <button type="submit" id="set-apns-token">Set the APNs key</button>
        </form>
        </section>
        <section class="panel" aria-labelledby="certificate-heading">
        <h2 id="certificate-heading">APNs certificate (.p12)</h2>
        <form method="post" action="{{base}}/console/push/apns-certificate" enctype="multipart/form-data" novalidate>
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="client_app_key">Client app key</label><input id="client_app_key" name="client_app_key" type="text" autocomplete="off" value="{{clientAppKey}}">
        <p class="hint">The name the app's devices are known by; a certificate per app.</p>
        {{#clientAppKeyError}}<p class="field-error" id="client-app-key-error">{{clientAppKeyError}}</p>{{/clientAppKeyError}}
        <label for="certificate_topic">Bundle ID (topic)</label><input id="certificate_topic" name="certificate_topic" type="text" autocomplete="off" value="{{certificateTopic}}">
        {{#certificateTopicError}}<p class="field-error" id="certificate-topic-error">{{certificateTopicError}}</p>{{/certificateTopicError}}
        <label for="certificate_environment">Environment</label>
        <select id="certificate_environment" name="certificate_environment"><option{{^certificateSandbox}} selected{{/certificateSandbox}}>production</option><option{{#certificateSandbox}} selected{{/certificateSandbox}}>sandbox</option></select>
        <label for="certificate_file">The .p12 file</label>
        <input id="certificate_file" name="certificate_file" type="file" accept=".p12,.pfx,application/x-pkcs12">
        <label for="password">Its password</label>
        <input id="password" name="password" type="password" autocomplete="off">
        {{#certificateError}}<p class="field-error" id="certificate-error">{{certificateError}}</p>{{/certificateError}}
        {{#certificateFormError}}<p class="field-error" id="certificate-form-error">{{certificateFormError}}</p>{{/certificateFormError}}
        <button type="submit" id="set-apns-certificate">Set the APNs certificate</button>
        </form>
        </section>
        <section class="panel" aria-labelledby="fcm-heading">
        <h2 id="fcm-heading">FCM service account</h2>
        <form method="post" action="{{base}}/console/push/fcm" enctype="multipart/form-data" novalidate>
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="service_account_file">The service account's JSON key file</label>
        <input id="service_account_file" name="service_account_file" type="file" accept=".json,application/json">
        <label for="service_account">or its text</label>
        <textarea id="service_account" name="service_account" rows="6" class="mono">{{serviceAccount}}</textarea>
        {{#serviceAccountError}}<p class="field-error" id="service-account-error">{{serviceAccountError}}</p>{{/serviceAccountError}}
        <button type="submit" id="set-fcm">Set the FCM account</button>
        </form>
        </section>
        {{/form}}
        {{/content}}{{/console-layout}}
        """

    static let request = """
        {{<console-layout}}{{$content}}
        <p><a href="{{base}}/console/push">← Push</a></p>
        <h1 id="request-heading">Request <code>{{requestID}}</code></h1>
        <dl class="facts">
        <dt>Status</dt><dd id="request-status">{{status}}</dd>
        <dt>User</dt><dd><a href="{{base}}/console/users/{{userID}}" id="request-user">{{userID}}</a></dd>
        <dt>Client</dt><dd><a href="{{base}}/console/clients/{{clientID}}" id="request-client">{{clientID}}</a></dd>
        <dt>Asked</dt><dd>{{createdAt}}</dd>
        <dt>Expires</dt><dd>{{expiresAt}}</dd>
        {{#decidedBy}}<dt>Answered by</dt><dd><code>{{decidedBy}}</code></dd>{{/decidedBy}}
        </dl>
        {{#devices}}<section class="panel" id="request-device-{{id}}">
        <h2>{{name}} <code>{{id}}</code></h2>
        <p class="hint">Push: {{push}} · last seen {{lastSeen}}</p>
        {{#hasNotifications}}<table>
        <thead><tr><th scope="col">Queued</th><th scope="col">Kind</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Sent</th></tr></thead>
        <tbody>
        {{#notifications}}<tr><td>{{createdAt}}</td><td>{{provider}} {{kind}}</td><td>{{#failed}}<strong class="problem">failed</strong>{{/failed}}{{^failed}}{{status}}{{/failed}}{{#lastError}} <span class="hint">{{lastError}}</span>{{/lastError}}</td><td>{{attempts}}</td><td>{{sentAt}}</td></tr>
        {{/notifications}}
        </tbody>
        </table>{{/hasNotifications}}
        {{^hasNotifications}}<p>No notification was queued for this device (it had no push token).</p>{{/hasNotifications}}
        </section>
        {{/devices}}
        {{^devices}}<p id="no-request-devices">The request was sealed to no device.</p>{{/devices}}
        {{#hasClientCalls}}<section class="panel" aria-labelledby="client-calls-heading">
        <h2 id="client-calls-heading">Calls to the client</h2>
        <table>
        <thead><tr><th scope="col">Queued</th><th scope="col">Kind</th><th scope="col">Status</th><th scope="col">Attempts</th></tr></thead>
        <tbody>
        {{#clientCalls}}<tr><td>{{createdAt}}</td><td>{{kind}}</td><td>{{#failed}}<strong class="problem">failed</strong>{{/failed}}{{^failed}}{{status}}{{/failed}}{{#lastError}} <span class="hint">{{lastError}}</span>{{/lastError}}</td><td>{{attempts}}</td></tr>
        {{/clientCalls}}
        </tbody>
        </table>
        </section>{{/hasClientCalls}}
        {{/content}}{{/console-layout}}
        """

    static let message = """
        {{<console-layout}}{{$content}}
        <h1>{{heading}}</h1>
        <p class="lead" id="message">{{message}}</p>
        <p><a href="{{base}}/console" class="button">Open the console</a></p>
        {{/content}}{{/console-layout}}
        """

    static let signedOut = """
        {{<console-layout}}{{$content}}
        <h1>Signed out</h1>
        <p class="lead" id="message">You are signed out of the console.</p>
        <p><a href="{{base}}/console" class="button">Sign in again</a></p>
        {{/content}}{{/console-layout}}
        """

    static let stylesheet = """
        :root { color-scheme: light dark; --accent: #1f5eff; --error: #c62828; --muted: #667085; --line: #d0d5dd; }
        * { box-sizing: border-box; }
        body.console { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: #f2f4f7; color: #101828; }
        @media (prefers-color-scheme: dark) { body.console { background: #0c111d; color: #f5f5f6; } .panel, .bar, table { background: #161b26; } }
        .bar { display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; align-items: center; padding: .75rem 1.5rem; background: #fff; border-bottom: 1px solid var(--line); }
        .brand { font-weight: 700; color: inherit; text-decoration: none; }
        .bar nav { display: flex; flex-wrap: wrap; gap: 1rem; flex: 1; }
        .bar nav a { color: var(--accent); text-decoration: none; }
        .bar nav a[aria-current=page] { font-weight: 700; text-decoration: underline; }
        .sign-out { margin: 0; } .who { color: var(--muted); }
        .page { max-width: 72rem; margin: 0 auto; padding: 1.5rem; }
        h1 { margin: 0 0 .5rem; font-size: 1.5rem; } h2 { font-size: 1.125rem; margin: 0 0 .75rem; }
        .lead { margin: 0 0 1.5rem; }
        .panel { margin: 1.5rem 0; padding: 1.25rem; background: #fff; border-radius: 10px; border: 1px solid var(--line); }
        label { display: block; margin: .75rem 0 .25rem; font-weight: 600; } label.check { font-weight: 400; }
        input[type=text], input[type=search], input[type=url], input[type=password] { width: 100%; max-width: 32rem; padding: .5rem .75rem; font: inherit; border: 1px solid var(--line); border-radius: 8px; }
        input[aria-invalid=true] { border-color: var(--error); }
        .row { display: flex; gap: .5rem; max-width: 40rem; } .row input { flex: 1; } .row button { margin-top: 0; width: auto; }
        .field-error { margin: .25rem 0 0; color: var(--error); font-size: .875rem; }
        .problem { color: #b42318; font-weight: 600; }
        .notice { padding: .5rem .75rem; border-radius: 8px; background: #ecfdf3; color: #05603a; }
        button, .button { display: inline-block; margin-top: .75rem; padding: .5rem 1rem; font: inherit; font-weight: 600; text-decoration: none;
          color: #fff; background: var(--accent); border: 0; border-radius: 8px; cursor: pointer; }
        .secondary { color: var(--accent); background: transparent; border: 1px solid var(--accent); }
        .danger { background: var(--error); } .link { margin: 0; padding: 0; background: none; color: var(--accent); font-weight: 400; text-decoration: underline; }
        .link.danger { color: var(--error); background: none; }
        table { width: 100%; border-collapse: collapse; background: #fff; border-radius: 10px; overflow: hidden; }
        th, td { padding: .5rem .75rem; text-align: left; border-bottom: 1px solid var(--line); vertical-align: top; }
        td form { margin: 0; }
        .facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; } .facts dt { color: var(--muted); } .facts dd { margin: 0; }
        .actions { display: flex; flex-wrap: wrap; gap: 1.5rem; align-items: flex-end; }
        .tiles { display: grid; grid-template-columns: repeat(auto-fill, minmax(12rem, 1fr)); gap: 1rem; padding: 0; list-style: none; }
        .tiles a { display: block; padding: 1rem; background: #fff; border: 1px solid var(--line); border-radius: 10px; text-decoration: none; color: inherit; }
        .tiles strong { display: block; font-size: 1.75rem; }
        .grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(14rem, 1fr)); gap: 0 1rem; }
        .grid input { max-width: none; } input[type=datetime-local] { width: 100%; padding: .45rem .75rem; font: inherit; border: 1px solid var(--line); border-radius: 8px; }
        .filters .button { margin-left: .5rem; }
        select, textarea { width: 100%; max-width: 32rem; padding: .5rem .75rem; font: inherit; border: 1px solid var(--line); border-radius: 8px; }
        input[type=file] { display: block; max-width: 100%; font: inherit; }
        fieldset { margin: 1rem 0 0; padding: .5rem 1rem; border: 1px solid var(--line); border-radius: 8px; } legend { font-weight: 600; }
        textarea.mono { font-family: ui-monospace, monospace; font-size: .85rem; }
        .charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(20rem, 1fr)); gap: 1rem; }
        .chart { margin: 0; padding: 1rem; background: #fff; border: 1px solid var(--line); border-radius: 10px; }
        .chart svg { display: block; color: inherit; } .axis { display: flex; justify-content: space-between; margin: .25rem 0 0; }
        .hint { color: var(--muted); font-size: .875rem; } code { word-break: break-all; }
        img[id=invitation-qr] { background: #fff; padding: .5rem; }
        #events .when span, #events .action code { white-space: nowrap; word-break: normal; }
        #events .detail { display: block; overflow-wrap: break-word; }
        @media (max-width: 40rem) {
          .page { padding: 1rem; } .bar { padding: .75rem 1rem; }
          table, thead, tbody, tr, th, td { display: block; } thead { display: none; }
          tr { border-bottom: 1px solid var(--line); padding: .5rem 0; } td { border: 0; padding: .125rem .75rem; }
          .facts { grid-template-columns: 1fr; } .facts dd { margin-bottom: .5rem; }
        }

        """
}
