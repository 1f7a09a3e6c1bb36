/** Spawning the database store child process (test/memory/stores/db-child.ts) for the fault tests. */
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const CHILD = fileURLToPath(new URL('../memory/stores/db-child.ts', import.meta.url))

/** Runs the child to its end and returns its output. */
export function runDbChild(kind: 'sqlite' | 'postgres' | 'jsonl', where: string, count: number, tag: string): Promise<string> {
  return runTsChild(CHILD, [kind, where, String(count), tag], tag)
}

/** Runs the TypeScript file `script` with `args` in a child process to its end and returns its output; a non-zero exit rejects with its stderr. */
export function runTsChild(script: string, args: string[], tag: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString() })
    child.stderr.on('data', (chunk: Buffer) => { err += chunk.toString() })
    child.on('error', reject)
    child.on('exit', code => (code === 0 ? resolve(out) : reject(new Error(`child ${tag} exited ${code}: ${err}`))))
  })
}

/**
 * Starts a child writing until killed, waits for `acks` acknowledged writes, sends SIGKILL (in
 * the middle of its next write), and returns the record contents it reported as acknowledged.
 */
export function killDbChildMidWrite(kind: 'sqlite' | 'postgres', where: string, acks: number, tag: string): Promise<string[]> {
  return new Promise<string[]>((resolve, reject) => {
    const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', CHILD, kind, where, 'forever', tag], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      if ((out.match(/^ack /gm) ?? []).length >= acks) child.kill('SIGKILL')
    })
    child.stderr!.on('data', (chunk: Buffer) => { err += chunk.toString() })
    child.on('error', reject)
    child.on('exit', (_code, signal) => {
      if (signal !== 'SIGKILL') return reject(new Error(`child ${tag} ended without SIGKILL: ${err}`))
      // Only complete lines were acknowledged.
      resolve([...out.matchAll(/^ack (\d+)\n/gm)].map(match => `${tag} fact ${match[1]}`))
    })
  })
}
