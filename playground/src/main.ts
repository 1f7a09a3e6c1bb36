import './style.css'
import { mountStudio } from './studio/app.ts'

void mountStudio(document.querySelector<HTMLElement>('#app')!)
