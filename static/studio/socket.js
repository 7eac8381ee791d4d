// A websocket that reconnects by itself. `url` may be a function, so that a run stream can
// ask for the events after the last sequence number it already has and lose nothing.
(function () {
  "use strict";

  class LiveSocket {
    constructor(url, { onMessage, onOpen, onStatus } = {}) {
      this.url = url;
      this.onMessage = onMessage || (() => {});
      this.onOpen = onOpen || (() => {});
      this.onStatus = onStatus || (() => {});
      this.queue = [];
      this.delay = 250;
      this.closed = false;
      this.connect();
    }

    absolute(path) {
      const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
      return `${scheme}//${window.location.host}${path}`;
    }

    connect() {
      const path = typeof this.url === "function" ? this.url() : this.url;
      this.ws = new WebSocket(this.absolute(path));
      this.onStatus("connecting");
      this.ws.onopen = () => {
        this.delay = 250;
        this.onStatus("open");
        this.onOpen();
        for (const message of this.queue.splice(0)) this.ws.send(message);
      };
      this.ws.onmessage = (event) => this.onMessage(JSON.parse(event.data));
      this.ws.onclose = (event) => {
        if (this.closed || event.code === 4403 || event.code === 4404) {
          this.onStatus(event.code === 4403 || event.code === 4404 ? "refused" : "closed");
          return;
        }
        this.onStatus("reconnecting");
        setTimeout(() => this.connect(), this.delay);
        this.delay = Math.min(this.delay * 2, 5000);
      };
    }

    send(payload) {
      const message = JSON.stringify(payload);
      if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(message);
      else this.queue.push(message);
    }

    close() {
      this.closed = true;
      if (this.ws) this.ws.close();
    }
  }

  window.JazzmineSocket = LiveSocket;
})();
