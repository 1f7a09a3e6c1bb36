import './style.css'
import { mountPlayground } from './app.ts'

void mountPlayground(document.querySelector<HTMLElement>('#app')!)
