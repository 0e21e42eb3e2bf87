/*
 * The browser side of the playground, served as /playground/assets/<hash>/playground.js because the page's CSP allows
 * no inline script. It runs after the React, ReactDOM, graphql-ws and GraphiQL UMD bundles, which define the globals it
 * uses, and after the line src/playground/playground-assets.ts puts before it: `var EXAMPLES = [...]`, the
 * preloaded tabs (src/playground/examples.ts). Plain ES2017, no build step: it only glues the bundles together.
 */
(function () {
  'use strict';
  // GraphiQL's menus add <style> elements at run time; the page's CSP admits only those carrying its nonce.
  var styleNonce = (document.querySelector('meta[name="bankgraph-style-nonce"]') || {}).content;
  if (styleNonce) {
    var createElement = document.createElement;
    document.createElement = function (tagName) {
      var element = createElement.apply(document, arguments);
      if (String(tagName).toLowerCase() === 'style') element.setAttribute('nonce', styleNonce);
      return element;
    };
  }
  var httpUrl = location.origin + '/graphql';
  var wsUrl = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/graphql';

  // The session cookie rides along on the WebSocket upgrade; a header typed in the Headers tab (a merchant key)
  // is passed as connectionParams.authorization, one socket per distinct value.
  var wsClients = {};
  function wsClientFor(authorization) {
    var key = authorization || '';
    if (!wsClients[key]) {
      wsClients[key] = graphqlWs.createClient({
        url: wsUrl,
        lazy: true,
        retryAttempts: 3,
        connectionParams: authorization ? { authorization: authorization } : {},
      });
    }
    return wsClients[key];
  }

  function subscribe(client, params) {
    var queue = [];
    var wake = function () {};
    var finished = false;
    var dispose = client.subscribe(
      { query: params.query, variables: params.variables, operationName: params.operationName || undefined },
      {
        next: function (value) {
          queue.push(value);
          wake();
        },
        // A GraphQL error over the socket arrives as a list of errors: show it like an HTTP error response.
        error: function (error) {
          queue.push(
            Array.isArray(error)
              ? { errors: error }
              : { errors: [{ message: 'WebSocket: ' + ((error && (error.reason || error.message)) || 'connection failed') }] },
          );
          finished = true;
          wake();
        },
        complete: function () {
          finished = true;
          wake();
        },
      },
    );
    var iterator = {
      next: function () {
        if (queue.length) return Promise.resolve({ value: queue.shift(), done: false });
        if (finished) return Promise.resolve({ value: undefined, done: true });
        return new Promise(function (resolve) {
          wake = resolve;
        }).then(function () {
          return iterator.next();
        });
      },
      return: function () {
        dispose();
        finished = true;
        return Promise.resolve({ value: undefined, done: true });
      },
    };
    iterator[Symbol.asyncIterator] = function () {
      return iterator;
    };
    return iterator;
  }

  // Parsed from the text being sent: GraphiQL's own parsed copy can lag behind an edit made a moment earlier.
  function documentOf(params) {
    try {
      return GraphiQL.GraphQL.parse(params.query);
    } catch (error) {
      return null;
    }
  }

  function isSubscription(params) {
    var document = documentOf(params);
    if (!document) return false;
    return document.definitions.some(function (definition) {
      return (
        definition.kind === 'OperationDefinition' &&
        definition.operation === 'subscription' &&
        (!params.operationName || (definition.name && definition.name.value === params.operationName))
      );
    });
  }

  // Right after the editor's text is replaced, GraphiQL can still hold the previous operation's name; a name the
  // document does not contain would make the server refuse the request, so it is corrected from the document.
  function withCurrentOperationName(params) {
    var document = documentOf(params);
    if (!document) return params;
    var operations = document.definitions.filter(function (definition) {
      return definition.kind === 'OperationDefinition';
    });
    var named = operations.some(function (definition) {
      return definition.name && definition.name.value === params.operationName;
    });
    if (!params.operationName || named || operations.length !== 1) return params;
    return Object.assign({}, params, { operationName: operations[0].name ? operations[0].name.value : undefined });
  }

  // The merchant key field: while it holds a key, operations are sent with it instead of the session (an
  // Authorization header typed into a tab's Headers still wins). Kept in this page only, never stored.
  var merchantKey = document.getElementById('merchant-key');
  // App identity: the access token typed into the bar goes with every request and socket unless a merchant key
  // does. Kept for this tab only, so it survives the round trip to the bank when connecting one.
  var accessToken = document.getElementById('access-token');
  if (accessToken) {
    accessToken.value = sessionStorage.getItem('bankgraph-access-token') || '';
    accessToken.addEventListener('input', function () {
      sessionStorage.setItem('bankgraph-access-token', accessToken.value.trim());
    });
  }
  function headersFor(options) {
    var headers = Object.assign({}, (options && options.headers) || {});
    var key = (merchantKey && merchantKey.value.trim()) || (accessToken && accessToken.value.trim());
    if (key && !headers.Authorization && !headers.authorization) headers.Authorization = 'Bearer ' + key;
    return headers;
  }

  // A version 4 UUID from getRandomValues, which, unlike randomUUID, plain-HTTP pages on another host have too.
  function newUuid() {
    var bytes = window.crypto.getRandomValues(new Uint8Array(16));
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    var hex = Array.prototype.map
      .call(bytes, function (byte) {
        return (byte + 0x100).toString(16).slice(1);
      })
      .join('');
    return hex.slice(0, 8) + '-' + hex.slice(8, 12) + '-' + hex.slice(12, 16) + '-' + hex.slice(16, 20) + '-' + hex.slice(20);
  }

  // The mutations whose input names an idempotency key: a run that names none gets a fresh one, so running the
  // tab again makes a new payout or refund instead of answering the earlier one.
  var FRESH_KEYS = { createPayout: 'transactionId', refundPayment: 'idempotencyKey' };
  function mutationFieldOf(params) {
    var document = documentOf(params);
    var operation =
      document &&
      document.definitions.filter(function (definition) {
        return (
          definition.kind === 'OperationDefinition' &&
          definition.operation === 'mutation' &&
          (!params.operationName || (definition.name && definition.name.value === params.operationName))
        );
      })[0];
    var field = operation && operation.selectionSet.selections[0];
    return field && field.kind === 'Field' && FRESH_KEYS[field.name.value] ? field.name.value : null;
  }
  function withFreshKey(params) {
    var field = mutationFieldOf(params);
    var variables = params.variables;
    if (!field || !variables || typeof variables.input !== 'object' || variables.input === null) return { params: params };
    var keyName = FRESH_KEYS[field];
    if (variables.input[keyName]) return { params: params, field: field, keyName: keyName, key: variables.input[keyName], fresh: false };
    var key = newUuid();
    var input = Object.assign({}, variables.input);
    input[keyName] = key;
    var fresh = Object.assign({}, params, { variables: Object.assign({}, variables, { input: input }) });
    return { params: fresh, field: field, keyName: keyName, key: key, fresh: true };
  }

  // One line in the bar about the last run of a payout or refund: the key it was sent with, and whether the answer
  // is an object made earlier under that key (extensions.idempotentReplay) rather than a new one.
  var runNote = document.getElementById('run-note');
  function showRunNote(sent, answer) {
    if (!runNote || !sent.field) return;
    var what = sent.field === 'createPayout' ? 'payout' : 'refund';
    var replay = answer && answer.extensions && answer.extensions.idempotentReplay === true;
    runNote.dataset.replay = replay ? 'true' : 'false';
    runNote.textContent = replay
      ? 'Idempotent replay: this is the earlier ' + what + ' made under ' + sent.keyName + ' ' + sent.key + '; nothing new was made.'
      : (sent.fresh ? 'Sent with a fresh ' : 'Sent with ') + sent.keyName + ' ' + sent.key + (answer && answer.data ? ': a new ' + what + '.' : '.');
    runNote.hidden = false;
  }

  // Queries and mutations go over HTTP POST. One using @defer or @stream is answered as multipart/mixed, a part per
  // payload; anything else as one JSON result.
  var ACCEPT = 'multipart/mixed;deferSpec=20220824, application/graphql-response+json, application/json';

  function now() {
    return window.performance.now();
  }

  // An answer that is not multipart is one JSON result, error statuses included (graphql-response+json answers a
  // request error with 4xx and a body).
  function jsonOf(response) {
    return response.text().then(function (text) {
      try {
        return JSON.parse(text);
      } catch (error) {
        throw new Error('The gateway answered HTTP ' + response.status + ' with a body that is not JSON: ' + text.slice(0, 300), { cause: error });
      }
    });
  }

  // The boundary named in the content type; "-" when none is, as meros and Apollo Client assume.
  function boundaryOf(contentType) {
    var match = /;\s*boundary="?([^";,]+)"?/i.exec(contentType);
    return match ? match[1] : '-';
  }

  // A multipart/mixed body read as its bytes arrive, as an async iterator of its parts' JSON payloads, so GraphiQL
  // shows each payload when it comes (it merges them into the response pane itself). onPayload sees each one as
  // soon as it is parsed. Returning early (GraphiQL's stop button) cancels the body, which ends the operation, and
  // tells onStop.
  function multipartPayloads(response, boundary, onPayload, onStop) {
    var reader = response.body.getReader();
    var decoder = new window.TextDecoder();
    var delimiter = '\r\n--' + boundary;
    // The leading CRLF lets the first delimiter match whether or not the body starts with one.
    var buffer = '\r\n';
    var ready = [];
    var ended = false;
    var truncated = false;
    // Each part lies between two delimiters: headers, an empty line, then the JSON; "--" after a delimiter ends the body.
    function takeParts() {
      for (;;) {
        var start = buffer.indexOf(delimiter);
        if (start === -1) return;
        var after = start + delimiter.length;
        if (buffer.slice(after, after + 2) === '--') {
          ended = true;
          return;
        }
        var next = buffer.indexOf(delimiter, after);
        if (next === -1) return;
        var part = buffer.slice(after, next);
        buffer = buffer.slice(next);
        var bodyAt = part.indexOf('\r\n\r\n');
        var payload;
        try {
          payload = JSON.parse(part.slice(bodyAt === -1 ? 0 : bodyAt + 4));
        } catch (error) {
          throw new Error('A part of the multipart answer is not JSON: ' + part.slice(0, 300), { cause: error });
        }
        ready.push(payload);
        onPayload(payload);
      }
    }
    var iterator = {
      next: function () {
        if (ready.length) return Promise.resolve({ value: ready.shift(), done: false });
        if (truncated) return Promise.reject(new Error('The multipart answer ended before its closing boundary: its last payloads are missing.'));
        if (ended) return Promise.resolve({ value: undefined, done: true });
        return reader.read().then(function (chunk) {
          if (chunk.done) {
            ended = true;
            truncated = true;
          } else {
            buffer += decoder.decode(chunk.value, { stream: true });
            takeParts();
          }
          return iterator.next();
        });
      },
      return: function () {
        if (!ended) onStop();
        ended = true;
        truncated = false;
        ready = [];
        return reader.cancel().then(function () {
          return { value: undefined, done: true };
        });
      },
    };
    iterator[Symbol.asyncIterator] = function () {
      return iterator;
    };
    return iterator;
  }

  // One line in the bar while a multipart answer arrives: each payload, what it carried (the first one, then the
  // labels or paths of its deferred and streamed parts, counted) and when it came, so parts that came apart are
  // seen apart; then done, or stopped when the stop button ended it first.
  var payloadNote = document.getElementById('payload-note');
  function whatPayloadCarries(payload, index) {
    if (index === 0) return 'initial';
    var names = [];
    var counts = {};
    (payload.incremental || []).forEach(function (part) {
      var name = part.label || (part.path || []).join('.') || 'root';
      if (!counts[name]) names.push(name);
      counts[name] = (counts[name] || 0) + 1;
    });
    if (!names.length) return 'end';
    return names
      .map(function (name) {
        return counts[name] > 1 ? name + ' ×' + counts[name] : name;
      })
      .join(', ');
  }
  function showPayloads(arrivals, complete) {
    if (!payloadNote) return;
    var state = complete === 'stopped' ? ' · stopped' : complete ? ' · done' : ' · waiting for more…';
    payloadNote.textContent = 'Incremental delivery: ' + arrivals.join(' · ') + state;
    payloadNote.hidden = false;
  }
  function hidePayloads() {
    if (payloadNote) payloadNote.hidden = true;
  }

  // onPayload sees the one result, or each payload of a multipart answer as it arrives.
  function postOperation(params, headers, onPayload) {
    var started = now();
    return fetch(httpUrl, {
      method: 'POST',
      credentials: 'same-origin',
      headers: Object.assign({ 'content-type': 'application/json', accept: ACCEPT }, headers),
      body: JSON.stringify(params),
    }).then(function (response) {
      var contentType = response.headers.get('content-type') || '';
      if (!/^multipart\/mixed\b/i.test(contentType)) {
        return jsonOf(response).then(function (result) {
          onPayload(result);
          return result;
        });
      }
      var arrivals = [];
      return multipartPayloads(
        response,
        boundaryOf(contentType),
        function (payload) {
          arrivals.push(
            'payload ' + (arrivals.length + 1) + ' (' + whatPayloadCarries(payload, arrivals.length) + ') at ' + Math.round(now() - started) + ' ms',
          );
          showPayloads(arrivals, payload.hasNext === false);
          onPayload(payload);
        },
        function () {
          showPayloads(arrivals, 'stopped');
        },
      );
    });
  }

  function fetcher(graphQLParams, options) {
    var sent = withFreshKey(withCurrentOperationName(graphQLParams));
    var params = sent.params;
    var headers = headersFor(options);
    hidePayloads();
    if (isSubscription(params)) return subscribe(wsClientFor(headers.Authorization || headers.authorization), params);
    var first = true;
    return postOperation(params, headers, function (payload) {
      // The first payload is the one that says whether a payout or refund is new or replayed.
      if (first) showRunNote(sent, payload);
      first = false;
    });
  }

  var connectBank = document.getElementById('connect-bank');
  if (connectBank) {
    connectBank.addEventListener('click', function () {
      var token = accessToken.value.trim();
      if (!token) {
        accessToken.focus();
        return;
      }
      fetch('/auth/connections', {
        method: 'POST',
        credentials: 'same-origin',
        headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'application/json' },
        body: JSON.stringify({ returnTo: '/graphql' }),
      })
        .then(function (response) {
          return response.json().then(function (body) {
            return { ok: response.ok, body: body };
          });
        })
        .then(function (answer) {
          if (answer.ok) location.assign(answer.body.authorizationUrl);
          else alert((answer.body.error && answer.body.error.message) || 'The bank could not be connected.');
        });
    });
  }

  // The banner (bank identity): who this page is signed in as, and the one button that fits (Sign in or Sign out).
  var who = document.getElementById('who');
  var signIn = document.getElementById('sign-in');
  var signOut = document.getElementById('sign-out');
  function showSignedOut(reason) {
    who.textContent = reason ? 'Not signed in: ' + reason : 'Not signed in.';
    signIn.hidden = false;
    signOut.hidden = true;
  }
  function showSignedIn(session, banks) {
    // The holder's name as their bank gives it; the user id (also in the tooltip) when the bank gave none.
    who.textContent = 'Signed in as ' + (session.holderName || session.userId) + (banks ? ' · banks: ' + (banks.length ? banks.join(', ') : 'none') : '');
    who.title = 'user id ' + session.userId;
    signIn.hidden = true;
    signOut.hidden = false;
  }
  // Connected banks, read with the session itself: the providers behind the accounts and cards it can see.
  function banksOf() {
    return fetch(httpUrl, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json' },
      body: JSON.stringify({ query: 'query PlaygroundBanks { viewer { accounts { provider { id } } cards { provider { id } } } }' }),
    })
      .then(function (response) {
        return response.json();
      })
      .then(function (answer) {
        var viewer = answer && answer.data && answer.data.viewer;
        if (!viewer) return null;
        var banks = [];
        viewer.accounts.concat(viewer.cards).forEach(function (item) {
          if (banks.indexOf(item.provider.id) < 0) banks.push(item.provider.id);
        });
        return banks;
      });
  }
  if (who) {
    fetch('/playground/session', { credentials: 'same-origin' })
      .then(function (response) {
        return response.json();
      })
      .then(function (session) {
        if (!session.signedIn) return showSignedOut(session.reason);
        showSignedIn(session, null);
        return banksOf().then(
          function (banks) {
            showSignedIn(session, banks);
          },
          function () {
            showSignedIn(session, null);
          },
        );
      })
      .catch(function () {
        who.textContent = 'Could not tell who is signed in (is the gateway up?).';
        signIn.hidden = false;
      });
    signOut.addEventListener('click', function () {
      fetch('/auth/logout', { method: 'POST', credentials: 'same-origin' }).then(function () {
        location.reload();
      });
    });
  }

  var root = ReactDOM.createRoot(document.getElementById('graphiql'));
  root.render(
    React.createElement(GraphiQL, {
      fetcher: fetcher,
      defaultTabs: EXAMPLES,
      defaultEditorToolsVisibility: true,
      shouldPersistHeaders: false,
    }),
  );
})();
