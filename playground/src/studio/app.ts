/**
 * The studio: chat with an agent (threads, steps, approvals, run timelines), its memory (records
 * table, search, detail, versions, actions) and its log (lines, verify, export, import), for one
 * user at a time. Preact + htm, bundled into `dist/studio` by the library build.
 */
import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { createApi, failureText, type StoreView } from '../api.ts'
import { Chat } from './chat.ts'
import { Log } from './log.ts'
import { Memory } from './memory.ts'
import { html } from './ui.ts'

export interface StudioOptions {
  /** Prefix of the agent routes. Default: the path before `/studio/` in the page's URL, else `/__agents`. */
  base?: string
}

/** The routes' prefix for a studio page at `pathname` (`/__agents/studio/` -> `/__agents`). */
export function baseOf(pathname: string): string {
  const match = /^(.*)\/studio(\/.*)?$/.exec(pathname)
  return match ? match[1]! : '/__agents'
}

type Tab = 'chat' | 'memory' | 'log'
const TABS: [Tab, string][] = [['chat', 'Chat'], ['memory', 'Memory'], ['log', 'Log']]

function Studio(props: { base: string; onReady: () => void }) {
  const [user, setUserState] = useState(() => localStorage.getItem('vam.user') ?? '')
  const [users, setUsers] = useState<string[]>([])
  const [agents, setAgents] = useState<string[]>([])
  const [agent, setAgent] = useState('')
  const [stores, setStores] = useState<StoreView[]>([])
  const [store, setStore] = useState('')
  const [tab, setTab] = useState<Tab>(() => (localStorage.getItem('vam.tab') as Tab | null) ?? 'chat')
  const [error, setError] = useState<string | undefined>()
  const [version, setVersion] = useState(0)
  const [api] = useState(() => createApi(props.base, () => currentUser.value))

  const setUser = (next: string) => {
    currentUser.value = next
    localStorage.setItem('vam.user', next)
    setUserState(next)
  }

  useEffect(() => {
    void (async () => {
      try {
        const listed = (await api.users()).users
        const picked = listed.includes(user) ? user : listed[0] ?? ''
        currentUser.value = picked
        setUsers(listed)
        setUserState(picked)
        const names = (await api.agents()).agents.map(candidate => candidate.name)
        setAgents(names)
        setAgent(names[0] ?? '')
        if (!names.length) setError('No agents found in server/agents.')
      } catch (failure) {
        setError(failureText(failure))
      }
      props.onReady()
    })()
  }, [])

  useEffect(() => {
    if (!agent || !user) return
    api.stores(agent).then(answer => {
      setStores(answer.stores)
      setStore(current => (answer.stores.some(candidate => candidate.name === current) ? current : answer.stores[0]?.name ?? ''))
    }, failure => setError(failureText(failure)))
  }, [agent, user, version])

  const pick = (next: Tab) => {
    localStorage.setItem('vam.tab', next)
    setTab(next)
  }
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key !== 'ArrowRight' && event.key !== 'ArrowLeft') return
    const index = TABS.findIndex(([name]) => name === tab)
    const next = TABS[(index + (event.key === 'ArrowRight' ? 1 : TABS.length - 1)) % TABS.length]![0]
    pick(next)
    document.getElementById(`vam-tab-${next}`)?.focus()
  }
  const bump = () => setVersion(count => count + 1)
  const current = stores.find(candidate => candidate.name === store)

  return html`<div class="studio">
    <header>
      <h1>Agent studio</h1>
      <label for="vam-agent">Agent</label>
      <select id="vam-agent" value=${agent} onChange=${(event: Event) => setAgent((event.target as HTMLSelectElement).value)}>
        ${agents.map(name => html`<option key=${name} value=${name}>${name}</option>`)}
      </select>
      <label for="vam-user">User</label>
      <select id="vam-user" value=${user} onChange=${(event: Event) => setUser((event.target as HTMLSelectElement).value)}>
        ${users.map(id => html`<option key=${id} value=${id}>${id}</option>`)}
      </select>
      <div role="tablist" aria-label="Studio views" onKeyDown=${onKeyDown}>
        ${TABS.map(([name, label]) => html`<button key=${name} type="button" role="tab" id=${`vam-tab-${name}`} aria-controls=${`vam-panel-${name}`} aria-selected=${tab === name ? 'true' : 'false'} tabindex=${tab === name ? 0 : -1} onClick=${() => pick(name)}>${label}</button>`)}
      </div>
    </header>
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    <main id=${`vam-panel-${tab}`} role="tabpanel" aria-labelledby=${`vam-tab-${tab}`}>
      ${agent && user ? (tab === 'chat'
        ? html`<${Chat} key=${`${agent}/${user}`} api=${api} agent=${agent} user=${user} onWrite=${bump} />`
        : tab === 'memory'
          ? (current ? html`<${Memory} key=${`${agent}/${user}/${store}`} api=${api} agent=${agent} user=${user} stores=${stores} store=${store} onStore=${setStore} onUser=${setUser} version=${version} />` : html`<p class="muted">This agent has no memory store.</p>`)
          : html`<${Log} key=${`${agent}/${user}/${store}`} api=${api} agent=${agent} store=${current} version=${version} onImported=${bump} />`) : null}
    </main>
  </div>`
}

// The user the API sends, read at request time (a closure over state would lag one render behind).
const currentUser = { value: '' }

/** Mounts the studio into `root`; resolves once the users and agents are loaded, with a function that removes it. */
export function mountStudio(root: HTMLElement, options: StudioOptions = {}): Promise<() => void> {
  const base = options.base ?? baseOf(location.pathname)
  // The page's "Loading…" placeholder goes; preact would otherwise keep it beside the studio.
  root.replaceChildren()
  return new Promise((resolve) => {
    render(html`<${Studio} base=${base} onReady=${() => resolve(() => render(null, root))} />`, root)
  })
}
