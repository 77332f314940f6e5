/** A checkbox with its label before it, as the forms lay out their boolean fields. */
export function Toggle({
  id,
  label,
  checked,
  onChange,
}: {
  id: string
  label: string
  checked: boolean
  onChange: (checked: boolean) => void
}) {
  return (
    <div class="field field-boolean">
      <label for={id}>{label}</label>
      <input id={id} type="checkbox" checked={checked} onChange={(event) => onChange((event.target as HTMLInputElement).checked)} />
    </div>
  )
}
