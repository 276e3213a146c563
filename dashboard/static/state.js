// The page's state, shared by the modules: what is asked, what is shown,
// the fetch under way and the chart.

export const app = {
  sites: null,        // the site names, from api/sites (null: not read yet)
  refreshSeconds: 10,
  sitesAt: 0,         // when api/sites was last read (Date.now())
  skewMs: 0,          // the server's clock minus the browser's (api/sites' now)
  state: null,        // the state asked (from the hash)
  hash: '',           // its canonical hash
  seq: 0,             // request sequence: a response of an older one is dropped
  inFlight: null,     // the AbortController of the fetch under way
  timer: 0,           // the next refresh
  missed: false,      // a refresh fell while the page was hidden
  shownHash: null,    // the hash the page shows now (null: nothing)
  shownState: null,   // and its state
  editing: false,     // the custom range's inputs were edited, not applied
  shownAt: 0,         // when it was fetched
  renders: 0,
  chart: null,        // the uPlot instance
  chartKey: '',       // what the chart was built for (rebuilt when it changes)
  lastData: null,
};
